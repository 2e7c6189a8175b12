import { decodeEvent, isContractError, RecordedEvent } from '@caseloop/contracts';
import { JsMsg } from 'nats';
import { DeadLetter } from './runner-dead-letters';
import { BoundedStreamReader } from './stream-reader';

export interface DecodedBatch {
  lastSeq: number;
  events: RecordedEvent[];
  dead: DeadLetter[];
}

export type Fetched = { ok: DecodedBatch | null } | { err: unknown };

/**
 * Messages decoded, or rows serialised, between two turns of the event loop: while the runner
 * prepares the next batch, the statements of the batch being written need the loop to go on.
 */
export const SLICE = 500;

export const yieldToIo = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * The reader's next batch past `after`, decoded. Decoding happens as the messages arrive, in slices
 * that let the batch being written go on meanwhile. A failed read resolves to `{ err }`.
 */
export function fetchBatch(reader: BoundedStreamReader, after: number, waitMs: number): Promise<Fetched> {
  return reader.next(waitMs).then(
    async (all) => {
      const msgs = all.filter((m) => m.seq > after);
      if (msgs.length === 0) return { ok: null };
      const decoded: DecodedBatch = { lastSeq: (msgs[msgs.length - 1] as JsMsg).seq, events: [], dead: [] };
      for (let i = 0; i < msgs.length; i += SLICE) {
        if (i > 0) await yieldToIo();
        const part = decodeBatch(msgs.slice(i, i + SLICE));
        decoded.events.push(...part.events);
        decoded.dead.push(...part.dead);
      }
      return { ok: decoded };
    },
    (err: unknown) => ({ err }),
  );
}

/** Decodes a batch; a message that breaks its contract is set aside with its sequence, never thrown. */
export function decodeBatch(msgs: readonly JsMsg[]): { events: RecordedEvent[]; dead: DeadLetter[] } {
  const events: RecordedEvent[] = [];
  const dead: DeadLetter[] = [];
  for (const m of msgs) {
    try {
      events.push(decodeEvent(m.subject, m.data, m.seq));
    } catch (e) {
      dead.push({
        seq: m.seq,
        subject: m.subject,
        code: isContractError(e) ? e.code : 'decode_failed',
        error: (e as Error).message.slice(0, 2_000),
        body: Buffer.from(m.data.subarray(0, 256 * 1024)),
      });
    }
  }
  return { events, dead };
}
