import { draft, EventData, EventDraft } from '@caseloop/contracts';
import { firstFailedFocusedCheck } from '../../checks/checks.runner';
import { attemptCommitMessage } from '../../pr-ready/branch.publisher';
import { RouteSpec } from '../../runtimes/route.config';
import { TaskStep, workingMs } from '../task.decider';
import { TaskView } from '../task.state';
import { Blockers } from './blocked';
import { ChecksStep } from './checks.step';
import { AppendNow, RunState, TaskProcessorDeps } from './step.context';
import { TargetWorkspace } from './target.workspace';

/** One attempt of a route on the case's worktree, as recorded by `AttemptStarted`. */
export interface AttemptRef {
  attemptId: string;
  attempt: number;
  route: 'normal' | 'escalation';
  fromCleanTree: boolean;
}

/**
 * An attempt: started in the ledger, the route's runtime run in the worktree, its change committed
 * and checked. An interrupted attempt is run again from its start, in the same worktree.
 */
export class AttemptStep {
  constructor(
    private readonly deps: Pick<TaskProcessorDeps, 'worktrees' | 'launcher' | 'routes' | 'now'>,
    private readonly workspace: TargetWorkspace,
    private readonly checks: ChecksStep,
    private readonly blockers: Blockers,
    private readonly state: RunState,
  ) {}

  /** Records the attempt's start (and the escalation it uses); answers the worker's sequence after it. */
  start(task: TaskView, step: Extract<TaskStep, { kind: 'attempt' }>, appendNow: AppendNow): Promise<number> {
    const route = this.routeOf(step.route);
    const start: EventDraft[] = [];
    if (step.escalation) {
      start.push(
        draft('EscalationUsed', {
          taskId: task.taskId,
          route: { name: route.name, kind: 'escalation' },
          ...step.escalation,
        }),
      );
    }
    start.push(
      draft('AttemptStarted', {
        taskId: task.taskId,
        attemptId: step.attemptId,
        attempt: step.attempt,
        route: { name: route.name, kind: step.route },
        fromCleanTree: step.fromCleanTree,
      }),
    );
    return appendNow(start, `attempt-start`);
  }

  async run(task: TaskView, ref: AttemptRef, appendNow: AppendNow): Promise<EventDraft[]> {
    const { attemptId, attempt, fromCleanTree } = ref;
    const repo = this.workspace.repositoryOf(task);
    const route = this.routeOf(ref.route);
    const routeRef = { name: route.name, kind: ref.route };
    const base = task.baseRevision as string;
    const path = await this.workspace.worktreeOf(task, repo);
    // From a clean tree for an escalation; otherwise from the last committed state (this also drops
    // whatever an interrupted run of this same attempt left behind).
    await this.deps.worktrees.resetTo(
      task.caseId,
      fromCleanTree ? base : (task.branchRevision ?? base),
      fromCleanTree ? 'pristine' : 'keep_ignored',
    );
    const startHead = await this.deps.worktrees.head(task.caseId);

    // No attempt outlives the case's working-time budget: it is stopped where the budget ends.
    const budgetMs = this.deps.routes.budget?.wallClockMs;
    const remaining =
      budgetMs === undefined ? Infinity : budgetMs - workingMs(task, this.deps.now().getTime());
    const limited =
      remaining < route.timeoutMs ? { ...route, timeoutMs: Math.max(1000, Math.floor(remaining)) } : route;
    const run = await this.deps.launcher.launch(limited, {
      caseId: task.caseId,
      attempt,
      brief: task.brief,
      revisionNote: task.revisionNote,
      worktree: path,
    });
    this.state.assertRunning();
    const finished = (over: Partial<EventData<'AttemptFinished'>>) =>
      draft('AttemptFinished', {
        taskId: task.taskId,
        attemptId,
        route: routeRef,
        durationMs: run.durationMs,
        outcome: run.timedOut ? 'timeout' : run.exitCode === 0 ? 'changed' : 'runtime_error',
        exitCode: run.exitCode,
        diffSha256: null,
        diffBytes: 0,
        checks: [],
        firstFailedFocusedCheck: null,
        revision: null,
        usage: run.usage ?? null,
        ...over,
      });

    if (!(await this.deps.worktrees.isIntact(task.caseId))) {
      return [
        finished({ outcome: 'runtime_error' }),
        this.blockers.raised(
          task,
          'worktree_lost',
          `attempt ${attempt} (${route.name}) removed or broke the worktree; every committed attempt is still on the case branch`,
        ),
      ];
    }
    await this.deps.worktrees.commitAll(task.caseId, attemptCommitMessage(task.title, task.caseId, attempt));
    // Compared with where the attempt started, not with "was there anything to commit":
    // a runtime that committed on its own still changed the branch.
    const head = await this.deps.worktrees.head(task.caseId);
    if (head === startHead) {
      const events: EventDraft[] = [
        finished({
          outcome: run.timedOut ? 'timeout' : run.exitCode === 0 ? 'no_change' : 'runtime_error',
          revision: head,
        }),
      ];
      if (run.exitCode === null && !run.timedOut) {
        events.push(
          this.blockers.raised(
            task,
            'runtime_failed',
            `route ${route.name} could not start: ${run.stderrTail.slice(-300)}`,
          ),
        );
      }
      return events;
    }
    const digest = await this.deps.worktrees.diffDigest(task.caseId, base);
    const targetHead = await this.workspace.sync(repo);
    const runs = await this.checks.run(task, { repo, path, revision: head, attemptId }, appendNow);
    const results = runs.map((r) => r.result);
    return [
      finished({
        ...(run.timedOut || run.exitCode !== 0 ? {} : { outcome: 'changed' }),
        diffSha256: digest.sha256,
        diffBytes: digest.bytes,
        checks: results,
        firstFailedFocusedCheck: firstFailedFocusedCheck(results),
        revision: head,
      }),
      ...this.checks.completed(task, head, targetHead, runs),
    ];
  }

  private routeOf(kind: 'normal' | 'escalation'): RouteSpec {
    return kind === 'escalation' && this.deps.routes.escalation
      ? this.deps.routes.escalation
      : this.deps.routes.normal;
  }
}
