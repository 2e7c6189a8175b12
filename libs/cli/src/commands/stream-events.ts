import { decodeEvent, RecordedEvent } from '@caseloop/contracts';
import { Ledger } from '@caseloop/ledger';
import { BoundedStreamReader } from '@caseloop/projections';

/** Every decodable event of the namespace in stream order, and how many messages were not decodable. */
export async function readWholeStream(
  ledger: Ledger,
): Promise<{ events: RecordedEvent[]; undecodable: number }> {
  const info = await ledger.jsm.streams.info(ledger.stream);
  const events: RecordedEvent[] = [];
  let undecodable = 0;
  if (info.state.messages === 0) return { events, undecodable };
  const reader = await BoundedStreamReader.open(ledger.js, ledger.jsm, {
    stream: ledger.stream,
    startSeq: 1,
    filterSubject: `${ledger.namespace}.*.*.*`,
    batchSize: 500,
  });
  try {
    for (;;) {
      const batch = await reader.next();
      for (const m of batch) {
        try {
          events.push(decodeEvent(m.subject, m.data, m.seq));
        } catch {
          undecodable += 1;
        }
      }
      const last = batch.at(-1)?.seq ?? 0;
      if (reader.remaining === 0 && (batch.length === 0 || last >= info.state.last_seq)) break;
    }
  } finally {
    await reader.close();
  }
  return { events, undecodable };
}
