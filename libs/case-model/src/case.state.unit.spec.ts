import { draft, EventDraft, eventDefinition, RecordedEvent } from '@caseloop/contracts';
import { CaseView, foldCase, initialCaseState, evolveCase } from './case.state';

const CASE = 'C01JMODEL000000000000000000';
const place = (m: string, thread: string | null = null) => ({
  guildId: '1',
  channelId: '2',
  threadId: thread,
  messageId: m,
});
let seq = 0;
const rec = (d: EventDraft, at = '2026-11-29T12:00:00.000Z'): RecordedEvent => {
  const def = eventDefinition(d.type);
  seq += 1;
  return {
    ...d,
    data: def ? def.schema.parse(d.data) : d.data,
    eventId: `e${seq}:0`,
    version: 1,
    aggregate: 'case',
    aggregateId: CASE,
    producer: def?.producer ?? 'coordinator',
    commandId: `e${seq}`,
    causationId: null,
    correlationId: 'c',
    occurredAt: at,
    seq,
    subject: `t.case.${CASE}.${def?.producer}`,
  } as RecordedEvent;
};
const fold = (...ds: EventDraft[]) => foldCase(ds.map((d) => rec(d))) as CaseView;
const opened = draft('CaseOpened', {
  sourceId: 'discord-10',
  place: place('10'),
  reporterId: '7',
  title: 'Export fails',
  confidence: 0,
  reasons: [],
});
const H1 = '1'.repeat(40);
const H2 = '2'.repeat(40);
const REV = 'a'.repeat(40);
const checks = (head: string) =>
  draft('ChecksCompleted', {
    taskId: 'T1',
    revision: REV,
    targetHead: head,
    passed: true,
    results: [
      {
        name: 'lint',
        kind: 'lint',
        outcome: 'passed',
        revision: REV,
        durationMs: 1,
        exitCode: 0,
        outputSha256: null,
        outputBytes: 0,
      },
    ],
  });
const intended = (deliveryId: string, chunkCount: number) =>
  draft('DeliveryIntended', {
    deliveryId,
    chunkIndex: 0,
    sourceId: 'discord-10',
    chunkCount,
    nonce: 'n',
    channelId: '2',
    threadId: '10',
    contentSha256: 'f'.repeat(64),
    length: 5,
    intendedAt: '2026-11-29T12:00:00.000Z',
  });
const confirmed = (deliveryId: string, chunkIndex: number) =>
  draft('DeliveryConfirmed', {
    deliveryId,
    chunkIndex,
    sourceId: 'discord-10',
    discordMessageId: `9${chunkIndex}`,
    channelId: '2',
    threadId: '10',
    reconciled: false,
  });

describe('evolveCase', () => {
  it('ignores everything before CaseOpened and events of other aggregates', () => {
    expect(foldCase([rec(draft('TaskResumed', { taskId: 'T1', reason: 'finding', note: null }))])).toEqual(
      initialCaseState(),
    );
    const s = fold(opened);
    const other = {
      ...rec(
        draft('SourceRouted', {
          sourceId: 'x',
          caseId: CASE,
          outcome: 'opened',
          confidence: 0,
          matchedWith: null,
          reasons: [],
        }),
      ),
      aggregate: 'source',
    } as RecordedEvent;
    expect(evolveCase(s, other)).toBe(s);
  });

  it('confirms a delivery only when every announced chunk is confirmed, and marks receipts per source', () => {
    const req = draft('DeliveryRequested', {
      deliveryId: 'receipt-r1-discord-10',
      sourceId: 'discord-10',
      kind: 'receipt',
      place: place('10'),
      content: 'x',
      receiptId: 'r1',
    });
    const partial = fold(
      opened,
      req,
      intended('receipt-r1-discord-10', 2),
      confirmed('receipt-r1-discord-10', 0),
    );
    expect(partial.deliveries[0]).toMatchObject({ chunkCount: 2, confirmedChunks: [0], confirmed: false });
    expect(partial.sources[0]?.receiptConfirmed).toEqual({ r1: false });
    expect(partial.routedReceipts).toEqual(['r1']);
    const full = fold(
      opened,
      req,
      intended('receipt-r1-discord-10', 2),
      confirmed('receipt-r1-discord-10', 0),
      confirmed('receipt-r1-discord-10', 1),
      confirmed('receipt-r1-discord-10', 1),
    );
    expect(full.deliveries[0]).toMatchObject({ confirmedChunks: [0, 1], confirmed: true });
    expect(full.sources[0]?.receiptConfirmed).toEqual({ r1: true });
  });

  it('keeps held reports with their verdicts and links sources once', () => {
    const held = draft('LinkReviewRequested', {
      sourceId: 'discord-11',
      place: place('11'),
      reporterId: '8',
      reviewId: 'R1',
      confidence: 0.3,
      reasons: [],
    });
    const s = fold(
      opened,
      held,
      draft('LinkReviewSettled', { reviewerId: '5', messageId: '6', reviewId: 'R1', verdict: 'same' }),
    );
    expect(s.pendingLinkReviews).toEqual([]);
    expect(s.linkReviews[0]).toMatchObject({ sourceId: 'discord-11', verdict: 'same', guildId: '1' });
    const link = draft('SourceLinked', {
      sourceId: 'discord-11',
      place: place('11'),
      reporterId: '8',
      via: 'link_review',
      confidence: 0.3,
      reasons: [],
    });
    expect(fold(opened, link, link).sources.map((x) => x.sourceId)).toEqual(['discord-10', 'discord-11']);
  });

  it('moves the target head forward only, and counts stale proofs', () => {
    const s = fold(
      opened,
      checks(H1),
      draft('TargetRevisionChecked', {
        taskId: 'T1',
        recorded: H1,
        head: H2,
        outcome: 'moved',
        rebasedRevision: null,
      }),
      checks(H1),
    );
    expect(s).toMatchObject({ targetHead: H2, supersededHeads: [H1], latestChecks: { targetHead: H1 } });
    expect(
      fold(
        opened,
        checks(H1),
        draft('ProofMarkedStale', { taskId: 'T1', provenRevision: REV, targetHead: H2 }),
      ),
    ).toMatchObject({ status: 'stale', staleProofs: 1, targetHead: H2 });
  });

  it('tracks the task: assigned once, cancelled, and a human decision', () => {
    const s = fold(
      opened,
      draft('TaskAssigned', {
        taskId: 'T1',
        repository: 'web',
        targetBranch: 'main',
        targetRevision: null,
        brief: 'b',
      }),
      draft('ReviewerDecided', { reviewerId: '5', messageId: '6', decision: 'reject', text: null }),
      draft('CaseRejected', { reviewerId: '5', reason: null }),
      draft('TaskCancelled', { taskId: 'T1', reason: 'rejected' }),
    );
    expect(s).toMatchObject({
      status: 'rejected',
      task: 'cancelled',
      taskId: 'T1',
      decision: { kind: 'reject', reviewerId: '5' },
    });
  });

  it('never pulls a case back to triage once work started, and a reviewer can make feedback actionable', () => {
    const assigned = draft('TaskAssigned', {
      taskId: 'T1',
      repository: 'web',
      targetBranch: 'main',
      targetRevision: null,
      brief: 'b',
    });
    expect(
      fold(
        opened,
        assigned,
        draft('CaseClassified', { classification: 'feedback', confidence: 1, reasons: [], by: 'rules' }),
      ).status,
    ).toBe('in_progress');
    const fb = fold(
      opened,
      draft('CaseClassified', { classification: 'feedback', confidence: 1, reasons: [], by: 'rules' }),
    );
    expect(fb.status).toBe('feedback');
    expect(
      fold(
        opened,
        draft('CaseClassified', { classification: 'feedback', confidence: 1, reasons: [], by: 'rules' }),
        draft('CaseMadeActionable', { reviewerId: '5', messageId: '6', note: null }),
      ),
    ).toMatchObject({ status: 'actionable', madeActionableBy: '5' });
  });
});
