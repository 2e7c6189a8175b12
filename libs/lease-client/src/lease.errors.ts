/**
 * Why an acquisition did not produce a lease. Outcomes on a held grant (lost, expired, released)
 * are not errors: they come back as a `LeaseCheck` with `holder: false`.
 * - `queue_timeout`: still waiting when `waitTimeoutMs` ran out (the service recorded LeaseRefused);
 * - `invalid_request`: the service refused the request's shape (a bug in the caller);
 * - `unavailable`: no lease service answered in time.
 */
export type LeaseErrorCode = 'queue_timeout' | 'invalid_request' | 'unavailable';

export class LeaseError extends Error {
  constructor(
    readonly code: LeaseErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'LeaseError';
  }
}
