import { foldCase } from '@caseloop/case-model';
import { decodeEvent, encodeEvent, RecordedEvent } from '@caseloop/contracts';
import { generateHistory } from '../testing/case-history.generator';
import { diffCase } from './case-audit';
import { Row } from '../table-spec';
import { caseRow, caseSourceRows } from './case-view.projection';

/** One generated case, recorded as the stream would give it back. */
function recordedCase(): { caseId: string; events: RecordedEvent[] } {
  const { events, caseIds } = generateHistory({ cases: 1, seed: 1_234, revisionLoops: 1 });
  const recorded = events.map((e, i) => {
    const enc = encodeEvent('ns', e);
    return decodeEvent(enc.subject, enc.body, 10 * (i + 1));
  });
  const caseId = caseIds[0] as string;
  return { caseId, events: recorded.filter((e) => e.aggregate === 'case' && e.aggregateId === caseId) };
}

/** The rows exactly as Postgres hands them back (timestamps as Dates, bigint as strings). */
function rowsOf(events: RecordedEvent[]) {
  const folded = foldCase(events);
  if (folded.status === 'none') throw new Error('the case did not open');
  const row = caseRow(folded);
  return {
    folded,
    rows: {
      cases: {
        ...row,
        opened_at: new Date(String(row.opened_at)),
        updated_at: new Date(String(row.updated_at)),
        last_seq: String(row.last_seq),
      } as Row,
      caseSources: caseSourceRows(folded),
      timelineSeqs: events.map((e) => e.seq),
    },
  };
}

describe('diffCase', () => {
  it('finds nothing when the rows are the fold of the stream', () => {
    const { events } = recordedCase();
    const { folded, rows } = rowsOf(events);
    expect(diffCase(folded, events, rows)).toEqual([]);
  });

  it('names a drifted column, a drifted field inside the folded state and a drifted source', () => {
    const { events } = recordedCase();
    const { folded, rows } = rowsOf(events);
    const state = rows.cases.state as { title: string };
    const tampered = {
      ...rows,
      cases: { ...rows.cases, status: 'rejected', state: { ...state, title: 'edited by hand' } },
      caseSources: rows.caseSources.map((s, i) => (i === 0 ? { ...s, via: 'thread' } : s)),
    };
    const drift = diffCase(folded, events, tampered);
    expect(drift).toEqual(
      expect.arrayContaining([
        { field: 'cases.status', stream: folded.status, projection: 'rejected' },
        { field: 'cases.state.title', stream: folded.title, projection: 'edited by hand' },
        { field: `case_sources[${folded.sources[0]?.sourceId}].via`, stream: 'opened', projection: 'thread' },
      ]),
    );
  });

  it('names timeline sequences missing from the projection or not in the stream', () => {
    const { events } = recordedCase();
    const { folded, rows } = rowsOf(events);
    const [first, ...rest] = rows.timelineSeqs;
    const drift = diffCase(folded, events, { ...rows, timelineSeqs: [...rest, 99_999] });
    expect(drift).toEqual([
      { field: `timeline[seq ${first}]`, stream: 'recorded', projection: null },
      { field: 'timeline[seq 99999]', stream: null, projection: 'recorded' },
    ]);
  });

  it('reports a projected case the stream does not have, and a stream case the projection lacks', () => {
    const { events } = recordedCase();
    const { folded, rows } = rowsOf(events);
    expect(
      diffCase({ status: 'none' }, [], { cases: rows.cases, caseSources: [], timelineSeqs: [] }),
    ).toEqual([{ field: 'cases', stream: null, projection: `row for ${folded.caseId}` }]);
    expect(diffCase(folded, events, { ...rows, cases: null })[0]).toEqual({
      field: 'cases',
      stream: `case ${folded.caseId}`,
      projection: null,
    });
  });
});
