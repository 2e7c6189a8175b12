import { aggregateFilter, decodeEvent, isContractError, RecordedEvent } from '@caseloop/contracts';
import { JetStreamManager, NatsConnection } from 'nats';
import { BoundedStreamReader } from '../stream-reader';

export interface Undecodable {
  seq: number;
  subject: string;
  error: string;
}

export interface SubjectHistory {
  events: RecordedEvent[];
  undecodable: Undecodable[];
}

/**
 * Every message on one subject filter, decoded, in stream order. Reads with a bounded, filtered
 * pull consumer: the server walks only the blocks that hold the subject.
 */
export async function readSubjectHistory(
  nc: NatsConnection,
  jsm: JetStreamManager,
  stream: string,
  filterSubject: string,
  { startSeq = 1, batchSize = 500 }: { startSeq?: number; batchSize?: number } = {},
): Promise<SubjectHistory> {
  const reader = await BoundedStreamReader.open(nc.jetstream(), jsm, {
    stream,
    startSeq,
    filterSubject,
    batchSize,
  });
  const out: SubjectHistory = { events: [], undecodable: [] };
  try {
    while (reader.remaining > 0) {
      for (const m of await reader.next()) {
        try {
          out.events.push(decodeEvent(m.subject, m.data, m.seq));
        } catch (e) {
          out.undecodable.push({
            seq: m.seq,
            subject: m.subject,
            error: isContractError(e) ? e.message : String(e),
          });
        }
      }
    }
  } finally {
    await reader.close();
  }
  return out;
}

export interface CaseHistory {
  caseEvents: RecordedEvent[];
  /** Events of the sources the case's events name (`source.<sourceId>.*`). */
  sourceEvents: RecordedEvent[];
  undecodable: Undecodable[];
}

const sourceIdsOf = (events: readonly RecordedEvent[]): string[] => {
  const ids = new Set<string>();
  for (const e of events) {
    const d = e.data as { sourceId?: unknown };
    if (typeof d.sourceId === 'string') ids.add(d.sourceId);
  }
  return [...ids];
};

/** A case's own events, plus (if asked) the events of every source linked to it, from the stream. */
export async function readCaseHistory(
  nc: NatsConnection,
  stream: string,
  namespace: string,
  caseId: string,
  { withSources, jsm: given }: { withSources: boolean; jsm?: JetStreamManager },
): Promise<CaseHistory> {
  const jsm = given ?? (await nc.jetstreamManager({ checkAPI: false }));
  const own = await readSubjectHistory(nc, jsm, stream, aggregateFilter(namespace, 'case', caseId));
  const history: CaseHistory = {
    caseEvents: own.events,
    sourceEvents: [],
    undecodable: [...own.undecodable],
  };
  if (withSources) {
    const perSource = await Promise.all(
      sourceIdsOf(own.events).map((sid) =>
        readSubjectHistory(nc, jsm, stream, aggregateFilter(namespace, 'source', sid)),
      ),
    );
    for (const h of perSource) {
      history.sourceEvents.push(...h.events);
      history.undecodable.push(...h.undecodable);
    }
    history.sourceEvents.sort((a, b) => a.seq - b.seq);
  }
  return history;
}

/** What the ledger still holds of a report's raw text. */
export type RawTextState = 'sealed' | 'forgotten' | 'not_kept';

/** Per received source among `events`: its raw text sealed, forgotten (key deleted), or never kept. */
export function rawTextStates(events: readonly RecordedEvent[]): Map<string, RawTextState> {
  const states = new Map<string, RawTextState>();
  for (const e of events) {
    if (e.type === 'SourceReceived' && !states.has(e.aggregateId))
      states.set(e.aggregateId, e.data.sealed ? 'sealed' : 'not_kept');
  }
  for (const e of events)
    if (e.type === 'SourceForgotten' && states.has(e.aggregateId)) states.set(e.aggregateId, 'forgotten');
  return states;
}
