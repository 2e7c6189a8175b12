import { ledgerStats } from '@caseloop/case-model';
import { RecordedEvent, visibleChars } from '@caseloop/contracts';
import { taskIdForCase } from '../cases/case.ids';
import {
  CASE_ID,
  check,
  CLEAR_BUG,
  context,
  decide,
  HEAD_1,
  HEAD_2,
  identity,
  NOW,
  record,
  recorded,
  REV_A,
  SHA,
  source,
} from '../cases/decision/case.fixtures';

/** Histories made by the decider itself, so the measures are checked against real event shapes. */
const S1 = source(1, CLEAR_BUG);
const S2 = source(
  2,
  'same crash on windows 11 after 4.3.0: Cannot find module keytar, blocks me, screenshot attached',
);
const TASK = taskIdForCase(CASE_ID, NOW);

function step(h: RecordedEvent[], e: RecordedEvent, sources = [S1, S2]): RecordedEvent[] {
  return [...h, e, ...record(decide([...h, e], { kind: 'observe', event: e }, context(sources)))];
}

function verifiedCase(): RecordedEvent[] {
  let h = record(decide([], { kind: 'open_case', caseId: CASE_ID, source: S1, identity }, context([S1])));
  h = [
    ...h,
    ...record(
      decide(h, { kind: 'link_source', source: S2, via: 'semantic_match', identity }, context([S1, S2])),
    ),
  ];
  h = step(
    h,
    recorded('ChecksCompleted', {
      taskId: TASK,
      revision: REV_A,
      targetHead: HEAD_1,
      passed: true,
      results: ['lint', 'typecheck', 'focused_test', 'build'].map((k) => check(k as 'lint', REV_A)),
    }),
  );
  h = [
    ...h,
    recorded('ClientValidationCompleted', {
      taskId: TASK,
      revision: REV_A,
      outcome: 'passed',
      reason: null,
      captureIds: ['c1'],
    }),
    recorded('ArtifactReviewed', {
      artifactId: 'a1',
      kind: 'screenshot',
      sha256: SHA,
      decision: 'cleared',
      redactions: [],
      basis: 'fixture',
    }),
    recorded('ArtifactStored', {
      artifactId: 'a1',
      kind: 'screenshot',
      key: 'k/a1.png',
      sha256: SHA,
      bytes: 1,
      contentType: 'image/png',
      revision: REV_A,
      captureId: 'c1',
      leaseToken: 1,
    }),
  ];
  h = step(
    h,
    recorded('ReceiptBuilt', {
      receiptId: 'r1',
      taskId: TASK,
      revision: REV_A,
      outcome: 'pr_ready',
      checks: [],
      client: { flow: 'f', outcome: 'passed', captureIds: ['c1'] },
      evidence: [{ key: 'k/a1.png', sha256: SHA, kind: 'screenshot', shareable: true }],
      residualRisk: 'none',
      humanAction: 'decide',
      rendered: 'Receipt r1',
      builtAt: NOW,
    }),
  );
  for (const s of [S1, S2]) {
    const id = `receipt-r1-${s.sourceId}`;
    h = [
      ...h,
      recorded(
        'DeliveryIntended',
        {
          deliveryId: id,
          chunkIndex: 0,
          sourceId: s.sourceId,
          chunkCount: 1,
          nonce: 'n',
          channelId: '200000000000000002',
          threadId: null,
          contentSha256: SHA,
          length: 9,
          intendedAt: NOW,
        },
        'intake',
      ),
    ];
    h = step(
      h,
      recorded(
        'DeliveryConfirmed',
        {
          deliveryId: id,
          chunkIndex: 0,
          sourceId: s.sourceId,
          discordMessageId: '500000000000000009',
          channelId: '200000000000000002',
          threadId: null,
          reconciled: false,
        },
        'intake',
      ),
    );
  }
  return h;
}

describe('ledger stats', () => {
  it('counts duplicate prevention, receipt completeness and verified cycle time with explicit denominators', () => {
    const h = verifiedCase();
    const received = recorded(
      'SourceReceived',
      {
        sourceId: S1.sourceId,
        place: S1.place,
        authorId: S1.reporterId,
        authorIsReviewer: false,
        content: S1.text,
        rawChars: visibleChars(S1.text),
        sealed: null,
        attachments: [],
        mentionedBot: false,
        createdAt: '2026-11-29T11:00:00.000Z',
        via: 'gateway',
      },
      'intake',
      S1.sourceId,
    );
    const stats = ledgerStats([received, ...h]);
    expect(stats.duplicatePrevention).toMatchObject({
      numerator: 1,
      denominator: 2,
      ratio: 0.5,
      opened: 1,
      linked: 1,
      held: 0,
    });
    expect(stats.receiptCompleteness).toEqual({ numerator: 1, denominator: 1, ratio: 1 });
    expect(stats.staleProofRejections).toEqual({ numerator: 0, denominator: 1, ratio: 0 });
    expect(stats.cycleTime).toMatchObject({ verifiedCompletions: 1, p50Minutes: 60 });
  });

  it('counts a stale proof and excludes unverified or unconfirmed cases from cycle time and completeness', () => {
    let h = verifiedCase().filter(
      (e) =>
        e.type !== 'CaseAwaitingReview' &&
        !(e.type === 'DeliveryConfirmed' && e.data.sourceId === S2.sourceId),
    );
    h = step(
      h,
      recorded(
        'TargetRevisionChecked',
        { taskId: TASK, recorded: HEAD_1, head: HEAD_2, outcome: 'moved', rebasedRevision: null },
        'worker',
      ),
    );
    const stats = ledgerStats(h);
    expect(stats.staleProofRejections).toEqual({ numerator: 1, denominator: 1, ratio: 1 });
    expect(stats.receiptCompleteness).toEqual({ numerator: 0, denominator: 1, ratio: 0 });
    expect(stats.cycleTime.verifiedCompletions).toBe(0);
  });

  it('respects the window and says when there is nothing to divide', () => {
    const stats = ledgerStats(verifiedCase(), { since: '2030-01-01T00:00:00Z' });
    expect(stats.duplicatePrevention).toMatchObject({ numerator: 0, denominator: 0, ratio: null });
    expect(stats.cycleTime).toMatchObject({ verifiedCompletions: 0, p50Minutes: null });
  });
});
