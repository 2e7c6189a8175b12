import { selectForDeepRead } from './live-set';

describe('the live set a heartbeat reads deeply', () => {
  const live = [
    { caseId: 'C1', status: 'in_progress', lastSeq: 10 },
    { caseId: 'C2', status: 'in_progress', lastSeq: 20 },
    { caseId: 'C3', status: 'validating', lastSeq: 30 },
    { caseId: 'C4', status: 'triage', lastSeq: 40 },
    { caseId: 'C5', status: 'triage', lastSeq: 50 },
  ];
  const looks = new Map([
    ['C2', { lastSeq: 15, recheckAt: null }],
    ['C3', { lastSeq: 30, recheckAt: 1_000 }],
    ['C4', { lastSeq: 40, recheckAt: null }],
    ['C5', { lastSeq: 50, recheckAt: 5_000 }],
  ]);

  it('reads new, changed and due cases and stays quiet on the rest', () => {
    expect(selectForDeepRead(live, looks, 2_000)).toEqual([
      { caseId: 'C1', reason: 'new' },
      { caseId: 'C2', reason: 'changed' },
      { caseId: 'C3', reason: 'recheck_due' },
    ]);
  });

  it('reads a quiet case that has a dead letter not yet reported', () => {
    expect(selectForDeepRead(live, looks, 2_000, new Set(['C4']))).toContainEqual({
      caseId: 'C4',
      reason: 'dead_letter',
    });
  });
});
