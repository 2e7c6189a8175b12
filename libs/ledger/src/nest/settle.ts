import { isContractError } from '@caseloop/contracts';
import { LedgerError, LedgerErrorCode, PoisonError, TransientError } from '../errors';

export type Settlement = { kind: 'poison'; code: string; reason: string } | { kind: 'retry'; reason: string };

/**
 * The transport's one error mapping: what never gets better by retrying is poison
 * (term + dead letter); everything else is retried with a growing delay up to max_deliver.
 */
export function settle(error: unknown): Settlement {
  const reason = describe(error);
  if (isContractError(error)) return { kind: 'poison', code: error.code, reason };
  if (error instanceof PoisonError) return { kind: 'poison', code: 'poison', reason };
  if (error instanceof TransientError) return { kind: 'retry', reason };
  if (error instanceof LedgerError) return ledgerSettlement(error.code, reason);
  return { kind: 'retry', reason };
}

function ledgerSettlement(code: LedgerErrorCode, reason: string): Settlement {
  switch (code) {
    case 'command_id_reused':
      return { kind: 'poison', code, reason };
    case 'concurrency_conflict':
    case 'retries_exhausted':
    case 'timeout':
    case 'not_connected':
    case 'leader_unavailable':
    case 'stream_missing':
    case 'append_refused':
    // A deployment fault (permissions, server version, stream config) is fixed by operators;
    // until then the event waits in redelivery and finally shows up as a MAX_DELIVERIES dead letter.
    case 'permission_denied':
    case 'feature_unsupported':
    case 'provision_conflict':
      return { kind: 'retry', reason };
    default: {
      const unreachable: never = code;
      return { kind: 'retry', reason: String(unreachable) };
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error)
    return String((error as { message: unknown }).message);
  return String(error);
}

/** Exponential back-off for `nak(delay)`: a plain nak is redelivered within milliseconds. */
export const nakDelay = (deliveryCount: number, baseMs: number, maxMs: number): number =>
  Math.min(maxMs, baseMs * 2 ** Math.max(0, deliveryCount - 1));
