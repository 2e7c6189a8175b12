import {
  ContractError,
  decodeEvent,
  isContractError,
  MAX_EVENT_BYTES,
  PASSED_OVER_ON_LOAD,
  RecordedEvent,
} from '@caseloop/contracts';

/**
 * The one way the ledger turns a stored message into an event. A conforming writer never stores
 * a body above MAX_EVENT_BYTES (encodeEvent refuses it), so anything larger came from elsewhere.
 */
export function readEvent(subject: string, body: Uint8Array, seq: number): RecordedEvent {
  if (body.byteLength > MAX_EVENT_BYTES) {
    throw new ContractError(
      'oversized_event',
      `message at seq ${seq} is ${body.byteLength} bytes; the limit is ${MAX_EVENT_BYTES}`,
      {
        seq,
      },
    );
  }
  return decodeEvent(subject, body, seq);
}

/**
 * `readEvent` for readers that fold many aggregates (a read model loaded at start): a message whose
 * break is in `PASSED_OVER_ON_LOAD` (a newer producer's type or version, a forged or unreadable
 * message) is null — passed over, as `EventStore.load` does; any other break still throws.
 */
export function readEventOrPass(subject: string, body: Uint8Array, seq: number): RecordedEvent | null {
  try {
    return readEvent(subject, body, seq);
  } catch (e) {
    if (isContractError(e) && PASSED_OVER_ON_LOAD.has(e.code)) return null;
    throw e;
  }
}
