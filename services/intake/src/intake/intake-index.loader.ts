import { AGGREGATES } from '@caseloop/contracts';
import { Ledger, readEventOrPass } from '@caseloop/ledger';
import { IntakeIndex } from './intake-index';

/**
 * Rebuilds the index from every event intake ever wrote (`<ns>.*.*.intake`), with an ordered
 * consumer read in bounded batches. Runs once at start, before the gateway connects.
 */
export async function loadIntakeIndex(
  ledger: Ledger,
  batch = 1_000,
): Promise<{ index: IntakeIndex; events: number }> {
  const index = new IntakeIndex();
  let events = 0;
  // One pass per aggregate: nats-server 2.9 takes one filter per consumer, and it must lie inside
  // one of the stream's subjects. Cases first, so case threads are known when sources are counted.
  for (const aggregate of [
    'case',
    'source',
    'ops',
  ] as const satisfies readonly (typeof AGGREGATES)[number][]) {
    events += await readInto(index, ledger, `${ledger.namespace}.${aggregate}.*.intake`, batch);
  }
  return { index, events };
}

async function readInto(index: IntakeIndex, ledger: Ledger, filter: string, batch: number): Promise<number> {
  const consumer = await ledger.js.consumers.get(ledger.stream, { filterSubjects: filter });
  let events = 0;
  for (;;) {
    const msgs = await consumer.fetch({ max_messages: batch, expires: 1_000 });
    let got = 0;
    let caughtUp = false;
    for await (const m of msgs) {
      got++;
      // a message this release cannot read is the consumers' dead letter, not a reason not to start
      const ev = readEventOrPass(m.subject, m.data, m.seq);
      if (ev) {
        index.apply(ev);
        events++;
      }
      if (m.info.pending === 0) {
        caughtUp = true;
        // Without this the fetch waits out `expires` for a batch that will never fill.
        msgs.stop();
        break;
      }
    }
    if (got === 0 || caughtUp) break;
  }
  return events;
}
