import { decideNextRoute } from '../routing/escalation.decider';
import { AttemptView, EndReason, TaskView, WorkerTaskState } from './task.state';

/**
 * The worker's next step for a case, from its folded state. Pure; side effects happen in the
 * processor, which appends each step's events and decides again, until the answer is `idle`.
 */
export type TaskStep =
  | { kind: 'idle'; reason: 'no_task' | 'blocked' | 'pr_ready' | 'ended' }
  | { kind: 'cleanup'; reason: EndReason }
  | { kind: 'prepare' }
  | { kind: 'check_revision'; resumeSeq: number }
  | { kind: 'resume_attempt'; attempt: AttemptView }
  | {
      kind: 'attempt';
      attempt: number;
      attemptId: string;
      route: 'normal' | 'escalation';
      fromCleanTree: boolean;
      escalation: { failedAttemptIds: [string, string]; focusedCheck: string } | null;
    }
  | { kind: 'run_checks'; revision: string }
  | { kind: 'push'; revision: string }
  | { kind: 'give_up'; blocker: 'checks_failing' | 'runtime_failed' | 'budget_exhausted'; detail: string };

export interface CaseBudgetLimits {
  wallClockMs?: number | undefined;
  attempts?: number | undefined;
  costUsd?: number | undefined;
}

export interface RoutingPolicy {
  maxAttempts: number;
  escalationConfigured: boolean;
  /** The case's budget (none when absent) and the time to measure its working time at. */
  budget?: CaseBudgetLimits;
  now?: number;
}

/** The case's working time so far: banked periods plus the one running now. */
export const workingMs = (state: TaskView, now: number): number =>
  state.activeMs + (state.activeSince === null ? 0 : Math.max(0, now - state.activeSince));

const minutes = (ms: number): string => {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
};

/**
 * Null while the budget allows another attempt; otherwise what is spent, in words: which limit,
 * and everything used so far (cost only as far as the runtimes reported it).
 */
export function budgetSpent(state: TaskView, budget: CaseBudgetLimits, now: number): string | null {
  const attempts = state.attempts.length;
  const worked = workingMs(state, now);
  const spent: string[] = [];
  if (budget.attempts !== undefined && attempts >= budget.attempts)
    spent.push(`${attempts} of ${budget.attempts} attempts made`);
  if (budget.wallClockMs !== undefined && worked >= budget.wallClockMs)
    spent.push(`${minutes(worked)} of ${minutes(budget.wallClockMs)} working time used`);
  if (budget.costUsd !== undefined && state.costUsd >= budget.costUsd)
    spent.push(`$${state.costUsd.toFixed(2)} of $${budget.costUsd.toFixed(2)} reported by the runtimes`);
  if (spent.length === 0) return null;
  const cost =
    state.costReports === 0
      ? 'no runtime reported a cost'
      : `$${state.costUsd.toFixed(2)} reported by ${state.costReports} of ${attempts} attempt(s)`;
  return (
    `The case's budget is spent: ${spent.join('; ')}. Used so far: ${attempts} attempt(s), ` +
    `${minutes(worked)} of working time, ${cost}. No further attempt is started; a human decides ` +
    'whether to raise the budget and resume, or to close the case.'
  );
}

export const attemptIdFor = (taskId: string, attempt: number): string =>
  `${taskId.slice(0, 100)}-a${attempt}`;

export function nextStep(state: WorkerTaskState, policy: RoutingPolicy): TaskStep {
  if (state.status === 'none') return { kind: 'idle', reason: 'no_task' };
  if (state.status === 'ended') {
    if (!state.worktreePrepared || state.worktreeRemoved) return { kind: 'idle', reason: 'ended' };
    return { kind: 'cleanup', reason: state.endReason ?? 'cancelled' };
  }
  if (state.blocked) return { kind: 'idle', reason: 'blocked' };
  if (!state.worktreePrepared) return { kind: 'prepare' };
  if (state.pendingResume) return { kind: 'check_revision', resumeSeq: state.pendingResume.seq };
  // The proof is about to be judged: confirm it still stands on the target head (a move makes it stale).
  if (state.targetCheckWanted && state.pushedRevision !== null && !state.attemptWanted) {
    return { kind: 'check_revision', resumeSeq: state.targetCheckWanted.seq };
  }

  const unfinished = state.attempts.find((a) => !a.finished);
  if (unfinished) return { kind: 'resume_attempt', attempt: unfinished };

  const branch = state.branchRevision;
  const changed = branch !== null && branch !== state.baseRevision;
  if (!state.attemptWanted && changed) {
    const checks = state.lastChecks;
    if (!checks || checks.revision !== branch) return { kind: 'run_checks', revision: branch };
    if (checks.passed) {
      return state.pushedRevision === branch
        ? { kind: 'idle', reason: 'pr_ready' }
        : { kind: 'push', revision: branch };
    }
  }

  const decision = decideNextRoute({
    attempts: state.attempts
      .filter((a) => a.finished)
      .map((a) => ({
        attemptId: a.attemptId,
        route: a.route.kind,
        diffSha256: a.diffSha256,
        firstFailedFocusedCheck: a.firstFailedFocusedCheck,
        passed: a.passed,
      })),
    normalAttemptsInRound: state.normalAttemptsInRound,
    maxAttempts: policy.maxAttempts,
    escalationConfigured: policy.escalationConfigured,
    escalationUsed: state.escalationUsed,
  });
  const attempt = state.attempts.length + 1;
  if (decision.route !== 'none' && policy.budget) {
    const spent = budgetSpent(state, policy.budget, policy.now ?? Date.now());
    if (spent) return { kind: 'give_up', blocker: 'budget_exhausted', detail: spent };
  }
  switch (decision.route) {
    case 'normal':
      return {
        kind: 'attempt',
        attempt,
        attemptId: attemptIdFor(state.taskId, attempt),
        route: 'normal',
        fromCleanTree: false,
        escalation: null,
      };
    case 'escalation':
      return {
        kind: 'attempt',
        attempt,
        attemptId: attemptIdFor(state.taskId, attempt),
        route: 'escalation',
        fromCleanTree: true,
        escalation: { failedAttemptIds: decision.failedAttemptIds, focusedCheck: decision.focusedCheck },
      };
    case 'none': {
      const anyChange = state.attempts.some((a) => a.diffSha256 !== null);
      const tried = state.attempts.length;
      return anyChange
        ? {
            kind: 'give_up',
            blocker: 'checks_failing',
            detail: `${tried} attempts did not make the checks pass; a human must look at the case.`,
          }
        : {
            kind: 'give_up',
            blocker: 'runtime_failed',
            detail: `${tried} attempts produced no change; the agent runtime needs attention.`,
          };
    }
  }
}

/**
 * The target branch is watched while the case awaits a human decision on a pushed proof and the
 * worker has nothing else to do: then no step of its own would notice the branch moving.
 */
export function watchesTarget(
  state: WorkerTaskState,
  policy: RoutingPolicy,
): state is TaskView & { awaitingReview: NonNullable<TaskView['awaitingReview']>; baseRevision: string } {
  if (state.status !== 'active' || !state.awaitingReview || !state.baseRevision) return false;
  const step = nextStep(state, policy);
  return step.kind === 'idle' && step.reason === 'pr_ready';
}
