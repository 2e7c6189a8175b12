import type { RecordedEvent } from '@caseloop/contracts';

/**
 * The worker's view of a case's one task, folded from the case's events (every producer's).
 * Pure: the worker decides its next step from this alone, so a redelivered or restarted task
 * picks up exactly where the ledger says it is.
 */
export interface AttemptView {
  attemptId: string;
  attempt: number;
  route: { name: string; kind: 'normal' | 'escalation' };
  fromCleanTree: boolean;
  finished: boolean;
  diffSha256: string | null;
  revision: string | null;
  firstFailedFocusedCheck: string | null;
  passed: boolean;
  outcome: 'changed' | 'no_change' | 'timeout' | 'runtime_error' | null;
}

export type EndReason = 'cancelled' | 'approved' | 'rejected' | 'duplicate';

export interface TaskView {
  status: 'active' | 'ended';
  caseId: string;
  title: string;
  taskId: string;
  repository: string;
  targetBranch: string;
  /** The revision recorded on the task; null means "the target branch head when the worktree is made". */
  assignedRevision: string | null;
  brief: string;
  revisionNote: string | null;
  worktreePrepared: boolean;
  /** The target revision the case branch currently sits on. */
  baseRevision: string | null;
  /** The case branch head. */
  branchRevision: string | null;
  attempts: AttemptView[];
  normalAttemptsInRound: number;
  escalationUsed: boolean;
  lastChecks: { revision: string; targetHead: string; passed: boolean } | null;
  pushedRevision: string | null;
  /** A TaskResumed not yet answered by a TargetRevisionChecked; its sequence makes the answer's command id. */
  pendingResume: { seq: number; reason: string } | null;
  /**
   * A receipt was built on this task's proof and the target head has not been looked at since:
   * the target may have moved while the client was validated, and only the worker can read it.
   */
  targetCheckWanted: { seq: number } | null;
  /** A reviewer asked for a revision: the next step is a new attempt even if the branch is pushed. */
  attemptWanted: boolean;
  /**
   * The case awaits a human decision on this task's proof (the event that said so), until the task
   * resumes: nothing else looks at the target branch then, so the worker watches it.
   */
  awaitingReview: { eventId: string; correlationId: string } | null;
  blocked: { kind: string; seq: number } | null;
  endReason: EndReason | null;
  worktreeRemoved: boolean;
  /** Working time before `activeSince` (the case waiting for a human does not count). */
  activeMs: number;
  /** When the current working period began (ms since the epoch); null while the case waits for a human. */
  activeSince: number | null;
  /** The sum of the costs the runtimes reported, and how many attempts reported one. */
  costUsd: number;
  costReports: number;
  lastSeq: number;
}

export type WorkerTaskState = { status: 'none'; caseId: string | null; title: string } | TaskView;

export const initialTaskState = (): WorkerTaskState => ({
  status: 'none',
  caseId: null,
  title: 'untitled case',
});

const END_BY_TYPE: Partial<Record<string, EndReason>> = {
  CaseApproved: 'approved',
  CaseRejected: 'rejected',
  CaseMarkedDuplicate: 'duplicate',
};

const timeOf = (e: RecordedEvent): number | null => {
  const t = Date.parse(e.occurredAt);
  return Number.isNaN(t) ? null : t;
};

/** The case stops working (it waits for a human): the working period so far is banked. */
const pause = (s: TaskView, e: RecordedEvent): TaskView => {
  const t = timeOf(e);
  if (s.activeSince === null || t === null) return s;
  return { ...s, activeMs: s.activeMs + Math.max(0, t - s.activeSince), activeSince: null };
};

const updateAttempt = (s: TaskView, attemptId: string, patch: Partial<AttemptView>): AttemptView[] =>
  s.attempts.map((a) => (a.attemptId === attemptId ? { ...a, ...patch } : a));

export function evolveTask(state: WorkerTaskState, e: RecordedEvent): WorkerTaskState {
  if (e.aggregate !== 'case') return state;
  if (state.status === 'none') {
    if (e.type === 'CaseOpened') return { ...state, caseId: e.aggregateId, title: e.data.title };
    if (e.type !== 'TaskAssigned') return state;
    const d = e.data;
    return {
      status: 'active',
      caseId: e.aggregateId,
      title: state.title,
      taskId: d.taskId,
      repository: d.repository,
      targetBranch: d.targetBranch,
      assignedRevision: d.targetRevision,
      brief: d.brief,
      revisionNote: null,
      worktreePrepared: false,
      baseRevision: null,
      branchRevision: null,
      attempts: [],
      normalAttemptsInRound: 0,
      escalationUsed: false,
      lastChecks: null,
      pushedRevision: null,
      pendingResume: null,
      targetCheckWanted: null,
      attemptWanted: false,
      awaitingReview: null,
      blocked: null,
      endReason: null,
      worktreeRemoved: false,
      activeMs: 0,
      activeSince: timeOf(e),
      costUsd: 0,
      costReports: 0,
      lastSeq: e.seq,
    };
  }
  const s: TaskView = { ...state, lastSeq: e.seq };
  const end = END_BY_TYPE[e.type];
  if (end) return { ...s, status: 'ended', endReason: s.endReason ?? end };
  switch (e.type) {
    case 'TaskAssigned':
      // One persistent task per case: a redelivered assignment changes nothing.
      return s;
    case 'TaskResumed':
      if (e.data.taskId !== s.taskId || s.status === 'ended') return s;
      // A resume starts a new round of attempts; failed or disputed proof is produced again first.
      return {
        ...s,
        activeSince: s.activeSince ?? timeOf(e),
        pendingResume: { seq: e.seq, reason: e.data.reason },
        awaitingReview: null,
        blocked: null,
        normalAttemptsInRound: 0,
        lastChecks:
          s.lastChecks && (!s.lastChecks.passed || e.data.reason === 'stale_proof') ? null : s.lastChecks,
        ...(e.data.reason === 'revision_requested'
          ? { attemptWanted: true, revisionNote: e.data.note ?? s.revisionNote }
          : {}),
      };
    case 'TaskCancelled':
      return e.data.taskId === s.taskId
        ? { ...s, status: 'ended', endReason: s.endReason ?? 'cancelled' }
        : s;
    case 'WorktreePrepared':
      return {
        ...s,
        worktreePrepared: true,
        baseRevision: s.baseRevision ?? e.data.baseRevision,
        branchRevision: s.branchRevision ?? e.data.baseRevision,
      };
    case 'TargetRevisionChecked': {
      const d = e.data;
      const moved = d.outcome === 'moved' && d.rebasedRevision !== null;
      return {
        ...s,
        pendingResume: null,
        targetCheckWanted: null,
        ...(moved ? { baseRevision: d.head, branchRevision: d.rebasedRevision } : {}),
      };
    }
    case 'AttemptStarted': {
      const d = e.data;
      if (s.attempts.some((a) => a.attemptId === d.attemptId)) return s;
      return {
        ...s,
        attemptWanted: false,
        normalAttemptsInRound: s.normalAttemptsInRound + (d.route.kind === 'normal' ? 1 : 0),
        attempts: [
          ...s.attempts,
          {
            attemptId: d.attemptId,
            attempt: d.attempt,
            route: d.route,
            fromCleanTree: d.fromCleanTree,
            finished: false,
            diffSha256: null,
            revision: null,
            firstFailedFocusedCheck: null,
            passed: false,
            outcome: null,
          },
        ],
      };
    }
    case 'AttemptFinished': {
      const d = e.data;
      const passed =
        d.checks.length > 0 && d.checks.every((c) => c.outcome === 'passed' || c.outcome === 'skipped');
      const cost = d.usage?.costUsd ?? null;
      return {
        ...s,
        costUsd: s.costUsd + (cost ?? 0),
        costReports: s.costReports + (cost === null ? 0 : 1),
        branchRevision: d.revision ?? s.branchRevision,
        attempts: updateAttempt(s, d.attemptId, {
          finished: true,
          diffSha256: d.diffSha256,
          revision: d.revision,
          firstFailedFocusedCheck: d.firstFailedFocusedCheck,
          passed,
          outcome: d.outcome,
        }),
      };
    }
    case 'EscalationUsed':
      return { ...s, escalationUsed: true };
    case 'ChecksCompleted':
      return {
        ...s,
        lastChecks: { revision: e.data.revision, targetHead: e.data.targetHead, passed: e.data.passed },
      };
    case 'BranchPushed':
      return { ...s, pushedRevision: e.data.revision };
    case 'ReceiptBuilt':
      return e.data.taskId === s.taskId ? { ...s, targetCheckWanted: { seq: e.seq } } : s;
    case 'CaseAwaitingReview':
      return { ...pause(s, e), awaitingReview: { eventId: e.eventId, correlationId: e.correlationId } };
    case 'BlockerRaised':
      return { ...pause(s, e), blocked: { kind: e.data.kind, seq: e.seq } };
    case 'WorktreeRemoved':
      return { ...s, worktreeRemoved: true };
    default:
      return s;
  }
}

export const foldTask = (events: readonly RecordedEvent[]): WorkerTaskState =>
  events.reduce(evolveTask, initialTaskState());
