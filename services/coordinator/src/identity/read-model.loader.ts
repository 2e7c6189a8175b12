import { directGet, Ledger, readEventOrPass } from '@caseloop/ledger';
import { BoundedStreamReader } from '@caseloop/projections';
import { IdentityReadModel } from './identity.read-model';

/** Identity-relevant event types: the loader skips the rest without decoding them. */
const RELEVANT = new Set([
  'SourceReceived',
  'SourceRouted',
  'CaseOpened',
  'SourceLinked',
  'LinkReviewRequested',
  'DeliveryConfirmed',
  'CaseApproved',
  'CaseRejected',
  'CaseMarkedDuplicate',
]);

export type LoadStrategy = 'auto' | 'consumer' | 'direct';

/**
 * Rebuilds the identity read model from the ledger at start, up to the stream's end at that
 * moment; the service's consumer keeps it current from there (applying an event twice is harmless).
 * `consumer` reads through an ephemeral pull consumer (fast); `direct` walks the stream with
 * direct gets, which a NATS user limited to its own durable consumer may still do; `auto` tries
 * the first and falls back to the second. Returns how many events were applied.
 */
export async function loadIdentityReadModel(
  ledger: Ledger,
  model: IdentityReadModel,
  strategy: LoadStrategy = 'auto',
  batchSize = 500,
): Promise<number> {
  const info = await ledger.jsm.streams.info(ledger.stream);
  const last = info.state.last_seq;
  if (last === 0) return 0;
  return (await readInto(ledger, model, strategy, last, 1, batchSize)).applied;
}

/**
 * Applies what the stream recorded after `fromSeq` up to its end now; returns that end. Several
 * coordinator replicas share one durable consumer, so each sees only part of the events: a
 * replica catches up this way before it routes a report, or it would compare the report with
 * an identity model that lacks the cases the other replica opened.
 */
export async function catchUpIdentityReadModel(
  ledger: Ledger,
  model: IdentityReadModel,
  fromSeq: number,
  strategy: LoadStrategy = 'auto',
): Promise<number> {
  const last = (await ledger.jsm.streams.info(ledger.stream)).state.last_seq;
  if (last <= fromSeq) return fromSeq;
  // A catch-up is a handful of events: direct gets read them without a consumer. An ephemeral
  // consumer's pending count can run ahead of what it delivers while the stream is being written
  // (each short fetch then waits out its expiry), which held a routing for 20-30 s, past the ack wait.
  const chosen = strategy === 'auto' && last - fromSeq <= CATCH_UP_DIRECT_SPAN ? 'direct' : strategy;
  return (await readInto(ledger, model, chosen, last, fromSeq + 1, 500)).seen;
}

/** What one read applied, and the last stream sequence it got to (where the next read starts). */
interface ReadResult {
  applied: number;
  seen: number;
}

/** Up to this many stream sequences behind, a catch-up reads by direct get. */
const CATCH_UP_DIRECT_SPAN = 2_000;

async function readInto(
  ledger: Ledger,
  model: IdentityReadModel,
  strategy: LoadStrategy,
  last: number,
  from: number,
  batchSize: number,
): Promise<ReadResult> {
  if (strategy === 'direct') return loadByDirectGet(ledger, model, last, from);
  if (strategy === 'consumer') return loadByConsumer(ledger, model, last, batchSize, from);
  try {
    return await loadByConsumer(ledger, model, last, batchSize, from);
  } catch {
    // A permission refusal for ephemeral consumers, or a consumer lost with its server (a stalled
    // read): direct gets finish the read. Applying an event twice is harmless.
    return loadByDirectGet(ledger, model, last, from);
  }
}

async function loadByDirectGet(
  ledger: Ledger,
  model: IdentityReadModel,
  last: number,
  from = 1,
): Promise<ReadResult> {
  let applied = 0;
  let seq = from;
  while (seq <= last) {
    let m;
    try {
      m = await directGet(ledger.jsm, ledger.stream, { seq, next_by_subj: `${ledger.namespace}.*.*.*` });
    } catch (e) {
      if ((e as { code?: string }).code === '404') break;
      throw e;
    }
    if (m.seq > last) break;
    const type = m.header?.get('Caseloop-Event-Type');
    const ev = !type || RELEVANT.has(type) ? readEventOrPass(m.subject, m.data, m.seq) : null;
    if (ev) {
      model.apply(ev);
      applied += 1;
    }
    seq = m.seq + 1;
  }
  // No message past `seq` matched: everything up to `last` was read.
  return { applied, seen: last };
}

async function loadByConsumer(
  ledger: Ledger,
  model: IdentityReadModel,
  last: number,
  batchSize: number,
  from = 1,
): Promise<ReadResult> {
  const reader = await BoundedStreamReader.open(ledger.js, ledger.jsm, {
    stream: ledger.stream,
    startSeq: from,
    filterSubject: `${ledger.namespace}.*.*.*`,
    batchSize,
  });
  let applied = 0;
  let seen = from - 1;
  try {
    for (;;) {
      const batch = await reader.next();
      for (const m of batch) {
        const type = m.headers?.get('Caseloop-Event-Type');
        if (type && !RELEVANT.has(type)) continue;
        // a message this release cannot read is dead-lettered by the consumer, not fatal at start
        const ev = readEventOrPass(m.subject, m.data, m.seq);
        if (!ev) continue;
        model.apply(ev);
        applied += 1;
      }
      seen = Math.max(seen, reader.position - 1);
      // Everything up to `last` is what was asked for: messages recorded since are not waited for.
      if (seen >= last || (reader.remaining === 0 && batch.length === 0)) break;
    }
  } finally {
    await reader.close();
  }
  // The loop ends only when nothing is pending: every message up to `last` was read.
  return { applied, seen: Math.max(seen, last) };
}
