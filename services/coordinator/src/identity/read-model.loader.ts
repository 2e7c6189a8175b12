import { Ledger, readEvent } from '@caseloop/ledger';
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

/**
 * Rebuilds the identity read model from the ledger at start, up to the stream's end at that
 * moment; the service's consumer keeps it current from there (applying an event twice is harmless).
 * Returns how many events were applied.
 */
export async function loadIdentityReadModel(ledger: Ledger, model: IdentityReadModel, batchSize = 500): Promise<number> {
  const info = await ledger.jsm.streams.info(ledger.stream);
  const last = info.state.last_seq;
  if (last === 0) return 0;
  const reader = await BoundedStreamReader.open(ledger.js, ledger.jsm, {
    stream: ledger.stream,
    startSeq: 1,
    filterSubject: `${ledger.namespace}.*.*.*`,
    batchSize,
  });
  let applied = 0;
  try {
    for (;;) {
      const batch = await reader.next();
      for (const m of batch) {
        const type = m.headers?.get('Caseloop-Event-Type');
        if (type && !RELEVANT.has(type)) continue;
        model.apply(readEvent(m.subject, m.data, m.seq));
        applied += 1;
      }
      const lastSeen = batch.at(-1)?.seq ?? 0;
      if (reader.remaining === 0 && (lastSeen >= last || batch.length === 0)) break;
    }
  } finally {
    await reader.close();
  }
  return applied;
}
