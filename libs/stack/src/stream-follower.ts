import { BoundedStreamReader } from '@caseloop/projections';
import { JetStreamClient, JetStreamManager, JsMsg } from 'nats';

export interface StreamFollowerOptions {
  stream: string;
  /** First stream sequence to deliver. */
  startSeq: number;
  batchSize?: number;
  /** How long one fetch waits when nothing is pending. */
  waitMs?: number;
  /** Pause before a new consumer after the old one failed. */
  retryMs?: number;
  /** Called once per message, in stream order; what it throws is ignored. */
  onMessage: (m: JsMsg) => void;
  /** The consumer failed (removed by the server, its server gone…): a new one reads on from `position`. */
  onReopen?: (why: string, position: number) => void;
  stopped: () => boolean;
}

/** Empty fetches in a row while the stream holds messages past the position, before a new consumer. */
const BEHIND_AFTER = 2;

/**
 * Follows a stream until `stopped()`, never throwing: its ephemeral consumer can be removed under it
 * (the server drops one left inactive past its threshold, e.g. while the machine is loaded, and one
 * whose server is lost), so on any failure, and when fetches keep coming back empty although the
 * stream has moved past the last message seen, it opens a new consumer from the next sequence it
 * has not delivered: nothing is skipped, nothing delivered twice.
 */
export async function followStream(
  js: JetStreamClient,
  jsm: JetStreamManager,
  o: StreamFollowerOptions,
): Promise<void> {
  let position = o.startSeq;
  let reader: BoundedStreamReader | null = null;
  let behind = 0;
  try {
    while (!o.stopped()) {
      try {
        reader ??= await BoundedStreamReader.open(js, jsm, {
          stream: o.stream,
          startSeq: position,
          batchSize: o.batchSize ?? 256,
        });
        const batch = await reader.next(o.waitMs ?? 1_000);
        for (const m of batch) {
          if (m.seq < position) continue;
          position = m.seq + 1;
          try {
            o.onMessage(m);
          } catch {
            // the follower's caller decides what a message means; a bad one is not the follower's end
          }
        }
        if (batch.length > 0) {
          behind = 0;
          continue;
        }
        const last = (await jsm.streams.info(o.stream)).state.last_seq;
        behind = last >= position ? behind + 1 : 0;
        if (behind >= BEHIND_AFTER)
          throw new Error(`nothing delivered while the stream holds ${last - position + 1} more message(s)`);
      } catch (e) {
        if (o.stopped()) break;
        o.onReopen?.((e as Error)?.message ?? String(e), position);
        const old = reader;
        reader = null;
        behind = 0;
        await old?.close().catch(() => undefined);
        await new Promise((r) => setTimeout(r, o.retryMs ?? 1_000));
      }
    }
  } finally {
    await reader?.close().catch(() => undefined);
  }
}
