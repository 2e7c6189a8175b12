import { sanitizeReport } from '@caseloop/privacy';

/**
 * Every free text a report could have shaped goes through the privacy redaction before it enters a
 * view, and a source's own words (`SourceReceived.content`) never do: the page shows what a receipt
 * may show.
 */
export const safeText = (text: string): string => sanitizeReport(text).brief;

export const short = (rev: string | null): string => (rev ? rev.slice(0, 10) : '—');
export const pct = (x: number): string => `${Math.round(x * 100)}%`;
export const list = (xs: readonly string[]): string => (xs.length === 0 ? '—' : xs.join(', '));
