import { encodeEvent, LedgerEvent, streamSubjects } from '@caseloop/contracts';
import {
  DiscardPolicy,
  headers,
  JetStreamManager,
  NatsConnection,
  PubAck,
  RetentionPolicy,
  StorageType,
} from 'nats';

/** A throwaway ledger-shaped stream for a test namespace (append-only, direct get on). */
export async function createTestStream(
  jsm: JetStreamManager,
  namespace: string,
  stream: string,
): Promise<void> {
  await jsm.streams.add({
    name: stream,
    subjects: streamSubjects(namespace),
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.New,
    deny_delete: true,
    deny_purge: false,
    allow_direct: true,
    max_msg_size: 256 * 1024,
  });
}

/**
 * Appends events as the ledger does (subject, msg id and envelope headers from `encodeEvent`),
 * with up to `inFlight` publishes awaiting their acks at once.
 */
export async function publishEvents(
  nc: NatsConnection,
  namespace: string,
  events: readonly LedgerEvent[],
  { inFlight = 2_000, onProgress }: { inFlight?: number; onProgress?: (done: number) => void } = {},
): Promise<number> {
  const js = nc.jetstream();
  const window = new Set<Promise<PubAck>>();
  let done = 0;
  let last = 0;
  for (const e of events) {
    const enc = encodeEvent(namespace, e);
    const h = headers();
    for (const [k, v] of Object.entries(enc.headers)) h.set(k, v);
    const p = js.publish(enc.subject, enc.body, { msgID: enc.msgId, headers: h });
    window.add(p);
    p.then(
      (ack) => {
        window.delete(p);
        done++;
        if (ack.seq > last) last = ack.seq;
      },
      () => window.delete(p),
    );
    if (window.size >= inFlight) await Promise.race(window);
    if (onProgress && done % 10_000 === 0) onProgress(done);
  }
  await Promise.all(window);
  return last;
}

/** A raw message straight onto a ledger subject, bypassing the codec (a poison message). */
export async function publishRaw(nc: NatsConnection, subject: string, body: string): Promise<number> {
  const ack = await nc.jetstream().publish(subject, new TextEncoder().encode(body));
  return ack.seq;
}
