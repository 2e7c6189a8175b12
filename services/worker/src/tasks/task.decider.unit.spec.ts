import { CheckResult, EventType, EventData, RecordedEvent } from '@caseloop/contracts';
import { nextStep, RoutingPolicy, watchesTarget } from './task.decider';
import { foldTask } from './task.state';

const CASE = 'C01TESTCASE';
const TASK = 'T01TESTTASK';
const rev = (c: string) => c.repeat(40);
const sha = (c: string) => c.repeat(64);
const PRODUCER: Partial<Record<EventType, RecordedEvent['producer']>> = {
  CaseOpened: 'coordinator',
  TaskAssigned: 'coordinator',
  TaskResumed: 'coordinator',
  TaskCancelled: 'coordinator',
  CaseApproved: 'coordinator',
  CaseAwaitingReview: 'coordinator',
};

let seq = 0;
const ev = <T extends EventType>(type: T, data: EventData<T>): RecordedEvent => {
  seq += 1;
  const producer = PRODUCER[type] ?? 'worker';
  return {
    eventId: `e${seq}:0`,
    version: 1,
    aggregate: 'case',
    aggregateId: CASE,
    producer,
    commandId: `e${seq}`,
    causationId: null,
    correlationId: 'corr',
    occurredAt: '2026-11-29T20:00:00.000Z',
    type,
    data,
    seq,
    subject: `caseloop.case.${CASE}.${producer}`,
  } as unknown as RecordedEvent;
};

const check = (
  name: string,
  kind: CheckResult['kind'],
  outcome: CheckResult['outcome'],
  revision: string,
): CheckResult => ({
  name,
  kind,
  outcome,
  revision,
  durationMs: 10,
  exitCode: outcome === 'passed' ? 0 : 1,
  outputSha256: sha('f'),
  outputBytes: 10,
});

const assigned = () => [
  ev('CaseOpened', {
    sourceId: 'discord-1',
    place: { guildId: '1', channelId: '2', threadId: null, messageId: '3' },
    reporterId: '4',
    title: 'Cart total wrong',
    confidence: 1,
    reasons: [],
  }),
  ev('TaskAssigned', {
    taskId: TASK,
    repository: 'webapp',
    targetBranch: 'main',
    targetRevision: rev('b'),
    brief: 'the total is off by one',
  }),
];
const prepared = () => [
  ...assigned(),
  ev('WorktreePrepared', {
    taskId: TASK,
    worktree: CASE,
    branch: `caseloop/${CASE}`,
    baseRevision: rev('b'),
    reused: false,
  }),
];
const started = (n: number, kind: 'normal' | 'escalation' = 'normal', fromCleanTree = false) =>
  ev('AttemptStarted', {
    taskId: TASK,
    attemptId: `${TASK}-a${n}`,
    attempt: n,
    route: { name: kind, kind },
    fromCleanTree,
  });
const finishedFailing = (
  n: number,
  diff: string,
  revision: string,
  focused = 'cart',
  kind: 'normal' | 'escalation' = 'normal',
) => [
  ev('AttemptFinished', {
    taskId: TASK,
    attemptId: `${TASK}-a${n}`,
    route: { name: kind, kind },
    durationMs: 5,
    outcome: 'changed',
    exitCode: 0,
    diffSha256: sha(diff),
    diffBytes: 100,
    checks: [check(focused, 'focused_test', 'failed', revision)],
    firstFailedFocusedCheck: focused,
    revision,
    usage: null,
  }),
  ev('ChecksCompleted', {
    taskId: TASK,
    revision,
    targetHead: rev('b'),
    results: [check(focused, 'focused_test', 'failed', revision)],
    passed: false,
  }),
];
const finishedPassing = (n: number, revision: string) => [
  ev('AttemptFinished', {
    taskId: TASK,
    attemptId: `${TASK}-a${n}`,
    route: { name: 'normal', kind: 'normal' },
    durationMs: 5,
    outcome: 'changed',
    exitCode: 0,
    diffSha256: sha('9'),
    diffBytes: 100,
    checks: [check('cart', 'focused_test', 'passed', revision)],
    firstFailedFocusedCheck: null,
    revision,
    usage: null,
  }),
  ev('ChecksCompleted', {
    taskId: TASK,
    revision,
    targetHead: rev('b'),
    results: [check('cart', 'focused_test', 'passed', revision)],
    passed: true,
  }),
];

const policy: RoutingPolicy = { maxAttempts: 3, escalationConfigured: true };
const when = (events: RecordedEvent[], p: RoutingPolicy = policy) => nextStep(foldTask(events), p);

describe('the worker task decider', () => {
  it('given no task, then idle', () => {
    expect(when([])).toEqual({ kind: 'idle', reason: 'no_task' });
  });

  it('given an assigned task, then the worktree is prepared first', () => {
    expect(when(assigned())).toEqual({ kind: 'prepare' });
  });

  it('given a prepared worktree, then attempt 1 on the normal route', () => {
    expect(when(prepared())).toMatchObject({
      kind: 'attempt',
      attempt: 1,
      attemptId: `${TASK}-a1`,
      route: 'normal',
      fromCleanTree: false,
    });
  });

  it('given an attempt that started and never finished (a restart), then that same attempt resumes', () => {
    expect(when([...prepared(), started(1)])).toMatchObject({
      kind: 'resume_attempt',
      attempt: { attemptId: `${TASK}-a1`, attempt: 1 },
    });
  });

  it('given one failed attempt, then a second normal attempt', () => {
    expect(when([...prepared(), started(1), ...finishedFailing(1, 'a', rev('1'))])).toMatchObject({
      kind: 'attempt',
      attempt: 2,
      route: 'normal',
    });
  });

  it('given two distinct attempts failing the same focused check, then the escalation from a clean tree', () => {
    const events = [
      ...prepared(),
      started(1),
      ...finishedFailing(1, 'a', rev('1')),
      started(2),
      ...finishedFailing(2, 'c', rev('2')),
    ];
    expect(when(events)).toEqual({
      kind: 'attempt',
      attempt: 3,
      attemptId: `${TASK}-a3`,
      route: 'escalation',
      fromCleanTree: true,
      escalation: { failedAttemptIds: [`${TASK}-a1`, `${TASK}-a2`], focusedCheck: 'cart' },
    });
  });

  it('given the escalation was used and failed, then never again; the budget runs out into a blocker', () => {
    const events = [
      ...prepared(),
      started(1),
      ...finishedFailing(1, 'a', rev('1')),
      started(2),
      ...finishedFailing(2, 'c', rev('2')),
      ev('EscalationUsed', {
        taskId: TASK,
        route: { name: 'escalation', kind: 'escalation' },
        failedAttemptIds: [`${TASK}-a1`, `${TASK}-a2`],
        focusedCheck: 'cart',
      }),
      started(3, 'escalation', true),
      ...finishedFailing(3, 'd', rev('3'), 'cart', 'escalation'),
    ];
    expect(when(events)).toMatchObject({ kind: 'attempt', attempt: 4, route: 'normal' });
    const more = [...events, started(4), ...finishedFailing(4, 'e', rev('4'))];
    expect(when(more)).toMatchObject({ kind: 'give_up', blocker: 'checks_failing' });
  });

  it('given passing checks on the branch, then push; once pushed, idle and PR-ready', () => {
    const events = [...prepared(), started(1), ...finishedPassing(1, rev('1'))];
    expect(when(events)).toEqual({ kind: 'push', revision: rev('1') });
    const pushed = [
      ...events,
      ev('BranchPushed', {
        taskId: TASK,
        branch: `caseloop/${CASE}`,
        revision: rev('1'),
        baseRevision: rev('b'),
        created: true,
        draftPullRequestUrl: null,
      }),
    ];
    expect(when(pushed)).toEqual({ kind: 'idle', reason: 'pr_ready' });
  });

  it('given a resume, then the target revision is checked; moved means the checks run again on the rebased revision', () => {
    const done = [
      ...prepared(),
      started(1),
      ...finishedPassing(1, rev('1')),
      ev('BranchPushed', {
        taskId: TASK,
        branch: `caseloop/${CASE}`,
        revision: rev('1'),
        baseRevision: rev('b'),
        created: true,
        draftPullRequestUrl: null,
      }),
    ];
    const resumed = [...done, ev('TaskResumed', { taskId: TASK, reason: 'stale_proof', note: null })];
    expect(when(resumed)).toMatchObject({ kind: 'check_revision' });
    const moved = [
      ...resumed,
      ev('TargetRevisionChecked', {
        taskId: TASK,
        recorded: rev('b'),
        head: rev('c'),
        outcome: 'moved',
        rebasedRevision: rev('5'),
      }),
    ];
    expect(when(moved)).toEqual({ kind: 'run_checks', revision: rev('5') });
  });

  it('given a receipt built on the pushed proof, then the target head is looked at once; moved means the checks run again', () => {
    const pushed = [
      ...prepared(),
      started(1),
      ...finishedPassing(1, rev('1')),
      ev('BranchPushed', {
        taskId: TASK,
        branch: `caseloop/${CASE}`,
        revision: rev('1'),
        baseRevision: rev('b'),
        created: true,
        draftPullRequestUrl: null,
      }),
    ];
    const receipt = (taskId: string) =>
      ev('ReceiptBuilt', {
        receiptId: `receipt-${seq}`,
        taskId,
        revision: rev('1'),
        outcome: 'pr_ready',
        checks: [],
        client: { flow: 'flow.js', outcome: 'passed', captureIds: ['cap1'] },
        evidence: [],
        residualRisk: 'none',
        humanAction: 'approve',
        rendered: 'receipt',
        builtAt: '2026-11-29T20:00:00.000Z',
      });
    // Another task's receipt asks nothing of this one.
    expect(when([...pushed, receipt('T01OTHERTASK')])).toEqual({ kind: 'idle', reason: 'pr_ready' });
    const built = [...pushed, receipt(TASK)];
    const last = built.at(-1) as RecordedEvent;
    expect(when(built)).toEqual({ kind: 'check_revision', resumeSeq: last.seq });
    const same = [
      ...built,
      ev('TargetRevisionChecked', {
        taskId: TASK,
        recorded: rev('b'),
        head: rev('b'),
        outcome: 'same',
        rebasedRevision: null,
      }),
    ];
    expect(when(same)).toEqual({ kind: 'idle', reason: 'pr_ready' });
    const moved = [
      ...built,
      ev('TargetRevisionChecked', {
        taskId: TASK,
        recorded: rev('b'),
        head: rev('c'),
        outcome: 'moved',
        rebasedRevision: rev('6'),
      }),
    ];
    expect(when(moved)).toEqual({ kind: 'run_checks', revision: rev('6') });
  });

  it('given a revision request after a pushed result, then a new attempt with a fresh round', () => {
    const events = [
      ...prepared(),
      started(1),
      ...finishedPassing(1, rev('1')),
      ev('BranchPushed', {
        taskId: TASK,
        branch: `caseloop/${CASE}`,
        revision: rev('1'),
        baseRevision: rev('b'),
        created: true,
        draftPullRequestUrl: null,
      }),
      ev('TaskResumed', { taskId: TASK, reason: 'revision_requested', note: 'also fix the tax line' }),
      ev('TargetRevisionChecked', {
        taskId: TASK,
        recorded: rev('b'),
        head: rev('b'),
        outcome: 'same',
        rebasedRevision: null,
      }),
    ];
    expect(when(events)).toMatchObject({ kind: 'attempt', attempt: 2, route: 'normal' });
    expect(foldTask(events)).toMatchObject({ revisionNote: 'also fix the tax line' });
  });

  it('given a case awaiting review on its pushed proof, then its target is watched until the task resumes or ends', () => {
    const pushed = [
      ...prepared(),
      started(1),
      ...finishedPassing(1, rev('1')),
      ev('BranchPushed', {
        taskId: TASK,
        branch: `caseloop/${CASE}`,
        revision: rev('1'),
        baseRevision: rev('b'),
        created: true,
        draftPullRequestUrl: null,
      }),
    ];
    const watched = (events: RecordedEvent[]) => watchesTarget(foldTask(events), policy);
    expect(watched(pushed)).toBe(false);
    const awaiting = [
      ...pushed,
      ev('CaseAwaitingReview', { receiptId: 'rcpt1', confirmedSources: ['discord-1'] }),
    ];
    expect(watched(awaiting)).toBe(true);
    expect(foldTask(awaiting)).toMatchObject({ awaitingReview: { eventId: awaiting.at(-1)!.eventId } });
    // A move seen by the watch: the branch sits on the new head and needs checks, so nothing more to watch.
    const moved = [
      ...awaiting,
      ev('TargetRevisionChecked', {
        taskId: TASK,
        recorded: rev('b'),
        head: rev('c'),
        outcome: 'moved',
        rebasedRevision: rev('6'),
      }),
    ];
    expect(watched(moved)).toBe(false);
    expect(
      watched([...awaiting, ev('TaskResumed', { taskId: TASK, reason: 'stale_proof', note: null })]),
    ).toBe(false);
    expect(
      watched([...awaiting, ev('BlockerRaised', { taskId: TASK, kind: 'conflict', detail: 'conflict' })]),
    ).toBe(false);
    expect(
      watched([...awaiting, ev('CaseApproved', { reviewerId: '42', branch: null, revision: null })]),
    ).toBe(false);
  });

  it('given a blocker, then idle until the task is resumed', () => {
    const blocked = [
      ...prepared(),
      ev('BlockerRaised', { taskId: TASK, kind: 'fixtures', detail: 'fixtures missing' }),
    ];
    expect(when(blocked)).toEqual({ kind: 'idle', reason: 'blocked' });
    expect(
      when([...blocked, ev('TaskResumed', { taskId: TASK, reason: 'finding', note: null })]),
    ).toMatchObject({ kind: 'check_revision' });
  });

  it('given a terminal case, then its worktree is cleaned up once', () => {
    const approved = [...prepared(), ev('CaseApproved', { reviewerId: '42', branch: null, revision: null })];
    expect(when(approved)).toEqual({ kind: 'cleanup', reason: 'approved' });
    expect(
      when([...approved, ev('WorktreeRemoved', { taskId: TASK, worktree: CASE, reason: 'approved' })]),
    ).toEqual({ kind: 'idle', reason: 'ended' });
    expect(when([...assigned(), ev('TaskCancelled', { taskId: TASK, reason: 'duplicate' })])).toEqual({
      kind: 'idle',
      reason: 'ended',
    });
  });
});

describe('the case budget', () => {
  const at = (e: RecordedEvent, iso: string): RecordedEvent => ({ ...e, occurredAt: iso }) as RecordedEvent;
  const withCost = (events: RecordedEvent[], costUsd: number | null): RecordedEvent[] =>
    events.map((e) =>
      e.type === 'AttemptFinished'
        ? ({
            ...e,
            data: {
              ...e.data,
              usage: {
                reportedBy: 'claude_code',
                costUsd,
                inputTokens: 10,
                cachedInputTokens: null,
                outputTokens: 1,
              },
            },
          } as RecordedEvent)
        : e,
    );
  const T0 = Date.parse('2026-11-29T20:00:00.000Z');

  it('given the attempts budget used up, then the task stops with a blocker saying what was used', () => {
    const events = [...prepared(), started(1), ...finishedFailing(1, 'a', rev('1'))];
    const step = when(events, { ...policy, budget: { attempts: 1 }, now: T0 + 90_000 });
    expect(step).toEqual({
      kind: 'give_up',
      blocker: 'budget_exhausted',
      detail:
        "The case's budget is spent: 1 of 1 attempts made. Used so far: 1 attempt(s), 1 min 30 s of working time, no runtime reported a cost. No further attempt is started; a human decides whether to raise the budget and resume, or to close the case.",
    });
    // Without a budget the same history goes on to attempt 2.
    expect(when(events)).toMatchObject({ kind: 'attempt', attempt: 2 });
  });

  it('given the reported cost at the limit, then no further attempt, the cost said as reported', () => {
    const events = withCost([...prepared(), started(1), ...finishedFailing(1, 'a', rev('1'))], 1.25);
    expect(when(events, { ...policy, budget: { costUsd: 1 }, now: T0 })).toMatchObject({
      kind: 'give_up',
      blocker: 'budget_exhausted',
      detail: expect.stringContaining('$1.25 of $1.00 reported by the runtimes'),
    });
    expect(when(events, { ...policy, budget: { costUsd: 2 }, now: T0 })).toMatchObject({
      kind: 'attempt',
      attempt: 2,
    });
  });

  it('counts working time only: the hours a case waited for a reviewer do not spend the wall-clock budget', () => {
    const base = [...prepared(), started(1), ...finishedPassing(1, rev('1'))];
    const history = [
      ...base.map((e) => at(e, '2026-11-29T20:00:00.000Z')),
      at(
        ev('CaseAwaitingReview', { taskId: TASK, receiptId: 'R1', revision: rev('1') } as never),
        '2026-11-29T20:10:00.000Z',
      ),
      at(
        ev('TaskResumed', { taskId: TASK, reason: 'revision_requested', note: 'also the tax' } as never),
        '2026-11-30T08:00:00.000Z',
      ),
    ];
    const morning = Date.parse('2026-11-30T08:05:00.000Z');
    const state = foldTask(history);
    if (state.status === 'none') throw new Error('no task');
    // 10 minutes before the review, 5 after: 15 minutes of work, not 12 hours.
    expect(state.activeMs + (morning - (state.activeSince ?? morning))).toBe(15 * 60_000);
    const p = (limit: number) => ({ ...policy, budget: { wallClockMs: limit }, now: morning });
    const afterResume = (limit: number) =>
      nextStep(
        foldTask([
          ...history,
          at(
            ev('TargetRevisionChecked', {
              taskId: TASK,
              recorded: rev('b'),
              head: rev('b'),
              outcome: 'same',
              rebasedRevision: null,
            }),
            '2026-11-30T08:00:01.000Z',
          ),
        ]),
        p(limit),
      );
    expect(afterResume(20 * 60_000)).toMatchObject({ kind: 'attempt', attempt: 2 });
    expect(afterResume(15 * 60_000)).toMatchObject({
      kind: 'give_up',
      blocker: 'budget_exhausted',
      detail: expect.stringContaining('15 min 00 s of 15 min 00 s working time used'),
    });
  });
});
