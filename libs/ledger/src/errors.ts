/**
 * Every way the ledger itself can fail. Transports map these codes once (see the
 * JetStream transport's settle step and the HTTP health mapping); business outcomes are events,
 * never errors.
 */
export type LedgerErrorCode =
  | 'concurrency_conflict'
  | 'retries_exhausted'
  | 'feature_unsupported'
  | 'append_refused'
  | 'command_id_reused'
  | 'not_connected'
  /** The stream's raft group has no leader (an election that does not finish): the cluster lost its quorum. */
  | 'leader_unavailable'
  | 'stream_missing'
  | 'provision_conflict'
  | 'permission_denied'
  | 'timeout';

export class LedgerError extends Error {
  constructor(
    readonly code: LedgerErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(`${code}: ${message}`);
    this.name = 'LedgerError';
  }
}

/** The subject moved on since the caller loaded it (JetStream error 10071). Reload and re-decide. */
export class ConcurrencyError extends LedgerError {
  constructor(
    readonly subject: string,
    readonly expected: number,
    message: string,
  ) {
    super('concurrency_conflict', message, { subject, expected });
    this.name = 'ConcurrencyError';
  }
}

/** A handler failure that may succeed later: the transport naks with a growing delay. */
export class TransientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransientError';
  }
}

/**
 * A dependency the handler needs does not answer (the object store, Discord, …): nothing is wrong
 * with the event. Retried like any transient error; once its deliveries are spent, the transport
 * holds it and keeps trying for as long as the outage lasts (up to its outage hold) instead of
 * dead-lettering it, so an outage longer than the retry budget costs no operator re-drive.
 */
export class DependencyUnavailable extends TransientError {
  constructor(
    readonly dependency: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DependencyUnavailable';
  }
}

/**
 * A message that can never be handled, whatever the retries: the transport terminates it and
 * records a dead letter naming its stream sequence.
 */
export class PoisonError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PoisonError';
  }
}

export const isLedgerError = (e: unknown): e is LedgerError => e instanceof LedgerError;
export const isConcurrencyError = (e: unknown): e is ConcurrencyError => e instanceof ConcurrencyError;

/** JetStream's "wrong last sequence" API error. */
export const JS_WRONG_LAST_SEQUENCE = 10071;

export function jsErrCode(e: unknown): number | undefined {
  const api = (e as { api_error?: { err_code?: number } } | null)?.api_error;
  return typeof api?.err_code === 'number' ? api.err_code : undefined;
}
