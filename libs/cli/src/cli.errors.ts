import { isContractError } from '@caseloop/contracts';
import { isProjectionError } from '@caseloop/projections';

/** An error the operator can act on, printed as one line; exit code 2. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** Turns anything thrown into one line without secrets (URLs lose their user info). */
export function describeError(e: unknown): string {
  if (e instanceof CliError || isContractError(e) || isProjectionError(e)) return scrub(e.message);
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err?.code === 'string' ? err.code : undefined;
  const message = typeof err?.message === 'string' ? err.message.split('\n')[0] : String(e);
  if (code === 'CONNECTION_REFUSED' || code === 'ECONNREFUSED')
    return `cannot connect: ${scrub(message ?? code)}`;
  return scrub(code && !message?.includes(code) ? `${code}: ${message}` : (message ?? 'unknown error'));
}

const scrub = (s: string): string => s.replace(/([a-z]+:\/\/)[^@\s/]*@/gi, '$1');
