import { ContractError, decodeEvent, MAX_EVENT_BYTES, RecordedEvent } from '@caseloop/contracts';

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
