/** The web chat page (filled in below). */
export const sandboxPage = (): string => '<!doctype html><title>caseloop sandbox</title>';
