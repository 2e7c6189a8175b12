import { assertSafeId, draft, EventData, EventDraft } from '@caseloop/contracts';
import type { EventStore } from '@caseloop/ledger';
import { ConcurrencyError } from '@caseloop/ledger';
import { branchName, TargetRepository } from '@caseloop/target-repositories';
import { CheckProgress, ChecksRunner, CheckRun, firstFailedFocusedCheck } from '../checks/checks.runner';
import { attemptCommitMessage, BranchPublisher } from '../pr-ready/branch.publisher';
import { DraftPullRequests } from '../pr-ready/draft-pull-requests';
import { RepositoryRegistry } from '../repositories/repository.registry';
import { classifyBlocker } from '../routing/blocker.classifier';
import { RouteSpec, RoutesFile } from '../runtimes/route.config';
import { RuntimeLauncher } from '../runtimes/runtime.launcher';
import { GitError } from '../worktrees/git.adapter';
import { KeyedMutex } from '../worktrees/keyed-mutex';
import { WorktreeManager } from '../worktrees/worktree.manager';
import { nextStep, RoutingPolicy, TaskStep, watchesTarget, workingMs } from './task.decider';
import { foldTask, TaskView } from './task.state';

export interface TaskLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface TaskProcessorDeps {
  store: Pick<EventStore, 'load' | 'append'>;
  repositories: RepositoryRegistry;
  worktrees: WorktreeManager;
  launcher: RuntimeLauncher;
  checks: ChecksRunner;
  publisher: BranchPublisher;
  draftPullRequests: DraftPullRequests | null;
  routes: RoutesFile;
  redact: (text: string) => string;
  now: () => Date;
  logger: TaskLogger;
  /** Told about every batch of events the worker appended. */
  metrics?: { record(events: readonly EventDraft[]): void };
}

export interface Cause {
  eventId: string;
  correlationId: string;
}

/** Records events in the middle of a step; answers the worker's sequence after them. */
type AppendNow = (events: EventDraft[], tag: string) => Promise<number>;

/** A step that cannot go on: recorded as a blocker, never thrown to the transport. */
class Blocked extends Error {
  constructor(
    readonly kind: 'repository_unavailable' | 'invalid_input' | 'worktree_lost' | 'permissions',
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** The worker is shutting down; the step is redone after the restart. */
export class WorkerStopping extends Error {
  constructor() {
    super('the worker is stopping; the step runs again after the restart');
    this.name = 'WorkerStopping';
  }
}

/** What one look at a case's target branch found (see `TaskProcessor.watchTargets`). */
export type WatchOutcome = 'not_watched' | 'unchanged' | 'moved' | 'unreachable' | 'failed';

/** Enough steps for every attempt, check run and push of a case; more means a decision loop. */
const MAX_STEPS = 200;

/**
 * Drives one case's task: load the case, fold the worker's view, decide the next step, do it,
 * append its events, and again, until nothing is left to do. Everything it knows comes from the
 * ledger, so a redelivered event or a restarted worker continues exactly where the case is:
 * a finished attempt is never re-run, an interrupted one is re-run in the same worktree.
 */
export class TaskProcessor {
  private readonly mutex = new KeyedMutex();
  private stopping = false;

  constructor(private readonly deps: TaskProcessorDeps) {}

  /** From now on nothing is recorded: outcomes of processes killed by the shutdown are not outcomes. */
  stop(): void {
    this.stopping = true;
  }

  private assertRunning(): void {
    if (this.stopping) throw new WorkerStopping();
  }

  async process(caseId: string, cause: Cause): Promise<string> {
    assertSafeId('caseId', caseId);
    // The transport serializes per case; a redelivery during a long attempt still waits here.
    return this.mutex.run(caseId, () => this.drive(caseId, cause));
  }

  private async drive(caseId: string, cause: Cause): Promise<string> {
    for (let i = 0; i < MAX_STEPS; i++) {
      this.assertRunning();
      const loaded = await this.deps.store.load('case', caseId);
      const state = foldTask(loaded.events);
      const step = nextStep(state, this.policy());
      if (step.kind === 'idle') return step.reason;
      const task = state as TaskView;
      this.deps.logger.info({ caseId, taskId: task.taskId, step: step.kind }, 'task step');
      const append = (events: EventDraft[], tag: string, expectedSeq: number): Promise<number> =>
        this.record(task, cause, events, tag, expectedSeq);
      try {
        // Events recorded while the step runs (an attempt's start, each check's progress) move the
        // worker's sequence on; the step's own events are appended after the last of them.
        let expected = loaded.lastSeqByProducer.worker ?? 0;
        const events = await this.execute(step, task, async (evs, tag) => {
          expected = await append(evs, `${tag}-${task.lastSeq}`, expected);
          return expected;
        });
        if (events.events.length > 0)
          await append(events.events, `${step.kind}-${events.seqTag ?? task.lastSeq}`, expected);
      } catch (e) {
        // Another replica advanced this case's worker subject: reload and decide again.
        if (e instanceof ConcurrencyError) continue;
        throw e;
      }
    }
    throw new Error(`case ${caseId}: no idle state after ${MAX_STEPS} steps`);
  }

  private policy(): RoutingPolicy {
    return {
      maxAttempts: this.deps.routes.maxAttempts,
      escalationConfigured: this.deps.routes.escalation !== null,
      budget: this.deps.routes.budget ?? {},
      now: this.deps.now().getTime(),
    };
  }

  private async record(
    task: TaskView,
    cause: Cause,
    events: EventDraft[],
    tag: string,
    expectedSeq: number,
  ): Promise<number> {
    this.assertRunning();
    const res = await this.deps.store.append({
      aggregate: 'case',
      aggregateId: task.caseId,
      producer: 'worker',
      events,
      // Deterministic per (task, step, state): a retried append is deduplicated by the ledger.
      commandId: `${task.taskId.slice(0, 80)}-${tag}`,
      causationId: cause.eventId,
      correlationId: cause.correlationId,
      occurredAt: this.deps.now().toISOString(),
      expectedSeq,
    });
    if (!res.duplicate) this.deps.metrics?.record(events);
    return res.seqs.at(-1) ?? expectedSeq;
  }

  /**
   * One look at the target branch of every case that has a worktree here and awaits review
   * (`watchesTarget`); each repository is fetched once per look. A case whose head moved away from
   * the revision its proof stands on gets the same check as after a resume (rebase, then
   * `TargetRevisionChecked`), which the coordinator answers like any move: the proof is stale and
   * the task resumes. Nothing is appended while the head stays put, and after a report the task
   * stands on the new head (or is blocked by a conflict), so each new head is reported once.
   */
  async watchTargets(): Promise<Record<string, WatchOutcome>> {
    const heads = new Map<string, Promise<string>>();
    const headOf = (repo: TargetRepository): Promise<string> => {
      const key = `${repo.id}\n${repo.targetBranch}`;
      const head = heads.get(key) ?? this.sync(repo);
      heads.set(key, head);
      return head;
    };
    const outcomes: Record<string, WatchOutcome> = {};
    for (const caseId of await this.deps.worktrees.caseIds()) {
      this.assertRunning();
      try {
        outcomes[caseId] = await this.watchTarget(caseId, headOf);
      } catch (e) {
        if (e instanceof WorkerStopping) throw e;
        // One case's trouble (the ledger, git itself) leaves the others watched; the next look retries it.
        this.deps.logger.warn({ caseId, err: this.deps.redact((e as Error).message) }, 'target watch failed');
        outcomes[caseId] = 'failed';
      }
    }
    return outcomes;
  }

  private async watchTarget(
    caseId: string,
    headOf: (repo: TargetRepository) => Promise<string>,
  ): Promise<WatchOutcome> {
    // Decided before taking the case's lock: a case in a long attempt is not watched and must not stall the look.
    if (!watchesTarget(foldTask((await this.deps.store.load('case', caseId)).events), this.policy()))
      return 'not_watched';
    return this.mutex.run(caseId, async () => {
      this.assertRunning();
      const loaded = await this.deps.store.load('case', caseId);
      const task = foldTask(loaded.events);
      if (!watchesTarget(task, this.policy())) return 'not_watched';
      let head: string;
      try {
        head = await headOf(this.repositoryOf(task));
      } catch (e) {
        // A remote out of reach is looked at again next time: no blocker on a proof under review.
        if (!(e instanceof Blocked)) throw e;
        this.deps.logger.warn(
          { caseId, taskId: task.taskId, kind: e.kind, detail: this.deps.redact(e.detail) },
          'target head not readable',
        );
        return 'unreachable';
      }
      if (head === task.baseRevision) return 'unchanged';
      this.deps.logger.info(
        { caseId, taskId: task.taskId, recorded: task.baseRevision, head },
        'target branch moved under a proof awaiting review',
      );
      let events: EventDraft[];
      try {
        events = await this.checkRevision(task, head);
      } catch (e) {
        if (!(e instanceof Blocked)) throw e;
        events = [this.blocker(task, e.kind, e.detail)];
      }
      await this.record(
        task,
        task.awaitingReview,
        events,
        `watch-${task.lastSeq}`,
        loaded.lastSeqByProducer.worker ?? 0,
      );
      return 'moved';
    });
  }

  private async execute(
    step: Exclude<TaskStep, { kind: 'idle' }>,
    task: TaskView,
    appendNow: AppendNow,
  ): Promise<{ events: EventDraft[]; seqTag?: number }> {
    try {
      switch (step.kind) {
        case 'prepare':
          return { events: await this.prepare(task) };
        case 'check_revision':
          return { events: await this.checkRevision(task) };
        case 'resume_attempt':
          return {
            events: await this.runAttempt(
              task,
              step.attempt.attemptId,
              step.attempt.attempt,
              step.attempt.route.kind,
              step.attempt.fromCleanTree,
              appendNow,
            ),
          };
        case 'attempt': {
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
          const seq = await appendNow(start, `attempt-start`);
          try {
            const events = await this.runAttempt(
              task,
              step.attemptId,
              step.attempt,
              step.route,
              step.fromCleanTree,
              appendNow,
            );
            return { events, seqTag: seq };
          } catch (e) {
            // The attempt never ran; it stays started and runs when the task is resumed.
            if (e instanceof Blocked) return { events: [this.blocker(task, e.kind, e.detail)], seqTag: seq };
            throw e;
          }
        }
        case 'run_checks':
          return { events: await this.rerunChecks(task, step.revision, appendNow) };
        case 'push':
          return { events: await this.push(task, step.revision) };
        case 'give_up':
          return {
            events: [
              draft('BlockerRaised', { taskId: task.taskId, kind: step.blocker, detail: step.detail }),
            ],
          };
        case 'cleanup': {
          const repo = this.deps.repositories.get(task.repository) ?? null;
          await this.deps.worktrees.remove(repo, task.caseId);
          return {
            events: [
              draft('WorktreeRemoved', { taskId: task.taskId, worktree: task.caseId, reason: step.reason }),
            ],
          };
        }
      }
    } catch (e) {
      if (e instanceof Blocked) return { events: [this.blocker(task, e.kind, e.detail)] };
      throw e;
    }
  }

  private blocker(task: TaskView, kind: EventData<'BlockerRaised'>['kind'], detail: string): EventDraft {
    return draft('BlockerRaised', {
      taskId: task.taskId,
      kind,
      detail: this.deps.redact(detail).slice(0, 2000) || kind,
    });
  }

  private routeOf(kind: 'normal' | 'escalation'): RouteSpec {
    return kind === 'escalation' && this.deps.routes.escalation
      ? this.deps.routes.escalation
      : this.deps.routes.normal;
  }

  /** The task's repository with the task's target branch, or a blocker naming what is wrong. */
  private repositoryOf(task: TaskView): TargetRepository {
    const repo = this.deps.repositories.get(task.repository);
    if (!repo)
      throw new Blocked(
        'repository_unavailable',
        `repository "${task.repository}" is not configured on this worker`,
      );
    if (!branchName.safeParse(task.targetBranch).success) {
      throw new Blocked(
        'invalid_input',
        'the task names a target branch that is not a plain git branch name (no "..", spaces or shell metacharacters)',
      );
    }
    return { ...repo, targetBranch: task.targetBranch };
  }

  private async sync(repo: TargetRepository): Promise<string> {
    try {
      await this.deps.worktrees.sync(repo);
      return await this.deps.worktrees.targetHead(repo);
    } catch (e) {
      if (e instanceof GitError) {
        throw new Blocked(
          'repository_unavailable',
          `fetching ${repo.targetBranch} of repository "${repo.id}" failed: ${e.stderrTail.trim().slice(-400) || e.code}`,
        );
      }
      throw e;
    }
  }

  /** The worktree exists and is on the case branch (re-attached from the mirror after a restart if needed). */
  private async worktreeOf(task: TaskView, repo: TargetRepository): Promise<string> {
    const base = task.baseRevision ?? task.assignedRevision;
    if (!base)
      throw new Blocked(
        'worktree_lost',
        'the case has no recorded base revision to rebuild its worktree from',
      );
    if (await this.deps.worktrees.isIntact(task.caseId)) return this.deps.worktrees.worktreePath(task.caseId);
    try {
      return (await this.deps.worktrees.prepare(repo, task.caseId, base)).path;
    } catch (e) {
      if (e instanceof GitError)
        throw new Blocked(
          'worktree_lost',
          `the worktree of case ${task.caseId} could not be restored: ${e.message.slice(0, 400)}`,
        );
      throw e;
    }
  }

  private async prepare(task: TaskView): Promise<EventDraft[]> {
    const repo = this.repositoryOf(task);
    const head = await this.sync(repo);
    const revision = task.assignedRevision ?? head;
    if (!(await this.deps.worktrees.hasCommit(repo, revision))) {
      throw new Blocked(
        'invalid_input',
        `the task's target revision ${revision} is not in repository "${repo.id}"`,
      );
    }
    const w = await this.deps.worktrees.prepare(repo, task.caseId, revision);
    return [
      draft('WorktreePrepared', {
        taskId: task.taskId,
        worktree: task.caseId,
        branch: w.branch,
        baseRevision: revision,
        reused: w.reused,
      }),
    ];
  }

  /** `fetched`: the target head, when the caller has just fetched it. */
  private async checkRevision(task: TaskView, fetched?: string): Promise<EventDraft[]> {
    const repo = this.repositoryOf(task);
    const head = fetched ?? (await this.sync(repo));
    const recorded = task.baseRevision as string;
    await this.worktreeOf(task, repo);
    if (head === recorded) {
      return [
        draft('TargetRevisionChecked', {
          taskId: task.taskId,
          recorded,
          head,
          outcome: 'same',
          rebasedRevision: null,
        }),
      ];
    }
    const r = await this.deps.worktrees.rebase(task.caseId, recorded, head);
    if (r.outcome === 'rebased') {
      return [
        draft('TargetRevisionChecked', {
          taskId: task.taskId,
          recorded,
          head,
          outcome: 'moved',
          rebasedRevision: r.revision,
        }),
      ];
    }
    return [
      draft('TargetRevisionChecked', {
        taskId: task.taskId,
        recorded,
        head,
        outcome: 'conflict',
        rebasedRevision: null,
      }),
      this.blocker(
        task,
        'conflict',
        `the case branch no longer applies to ${repo.targetBranch} at ${head}; a human must resolve the conflict`,
      ),
    ];
  }

  private async runAttempt(
    task: TaskView,
    attemptId: string,
    attempt: number,
    routeKind: 'normal' | 'escalation',
    fromCleanTree: boolean,
    appendNow: AppendNow,
  ): Promise<EventDraft[]> {
    const repo = this.repositoryOf(task);
    const route = this.routeOf(routeKind);
    const routeRef = { name: route.name, kind: routeKind };
    const base = task.baseRevision as string;
    const path = await this.worktreeOf(task, repo);
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
    this.assertRunning();
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
        this.blocker(
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
          this.blocker(
            task,
            'runtime_failed',
            `route ${route.name} could not start: ${run.stderrTail.slice(-300)}`,
          ),
        );
      }
      return events;
    }
    const digest = await this.deps.worktrees.diffDigest(task.caseId, base);
    const targetHead = await this.sync(repo);
    const runs = await this.runChecks(
      repo,
      task,
      path,
      head,
      this.progress(task, head, attemptId, appendNow),
    );
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
      ...this.checksEvents(task, head, targetHead, runs),
    ];
  }

  private checksEvents(task: TaskView, revision: string, targetHead: string, runs: CheckRun[]): EventDraft[] {
    const results = runs.map((r) => r.result);
    const passed = results.every((r) => r.outcome === 'passed' || r.outcome === 'skipped');
    const events: EventDraft[] = [
      draft('ChecksCompleted', { taskId: task.taskId, revision, targetHead, results, passed }),
    ];
    const env = runs.find((r) => r.blocker);
    if (env?.blocker) {
      events.push(
        this.blocker(
          task,
          env.blocker.kind,
          `check "${env.result.name}" failed at ${revision}: ${env.blocker.reason}. This is not a fault of the change; a human must fix the environment.`,
        ),
      );
    }
    return events;
  }

  private async rerunChecks(task: TaskView, revision: string, appendNow: AppendNow): Promise<EventDraft[]> {
    const repo = this.repositoryOf(task);
    const path = await this.worktreeOf(task, repo);
    if ((await this.deps.worktrees.head(task.caseId)) !== revision)
      await this.deps.worktrees.resetTo(task.caseId, revision);
    const targetHead = await this.sync(repo);
    const runs = await this.runChecks(
      repo,
      task,
      path,
      revision,
      this.progress(task, revision, null, appendNow),
    );
    return this.checksEvents(task, revision, targetHead, runs);
  }

  /** Each check's start and end go to the ledger as they happen: a long suite is visibly running. */
  private progress(
    task: TaskView,
    revision: string,
    attemptId: string | null,
    appendNow: AppendNow,
  ): CheckProgress {
    const tag = (index: number, edge: 's' | 'f') => `check-${revision.slice(0, 12)}-${index}${edge}`;
    return {
      started: async (check, index, total) => {
        await appendNow(
          [
            draft('CheckStarted', {
              taskId: task.taskId,
              revision,
              name: check.name,
              kind: check.kind,
              index,
              total,
              attemptId,
            }),
          ],
          tag(index, 's'),
        );
      },
      finished: async (run, index, total) => {
        await appendNow(
          [
            draft('CheckFinished', {
              taskId: task.taskId,
              index,
              total,
              attemptId,
              result: run.result,
              excerpt: run.excerpt,
              logKey: run.logKey,
            }),
          ],
          tag(index, 'f'),
        );
      },
    };
  }

  /**
   * Checks, then the tree put back to exactly the proven revision: a check that rewrote tracked
   * files (a formatter in write mode) must not leave the evidence service a tree that differs
   * from what the results name.
   */
  private async runChecks(
    repo: TargetRepository,
    task: TaskView,
    path: string,
    revision: string,
    progress: CheckProgress,
  ): Promise<CheckRun[]> {
    const runs = await this.deps.checks.runAll(repo, task.caseId, path, revision, progress);
    if (await this.deps.worktrees.isIntact(task.caseId))
      await this.deps.worktrees.resetTo(task.caseId, revision);
    return runs;
  }

  private async push(task: TaskView, revision: string): Promise<EventDraft[]> {
    const repo = this.repositoryOf(task);
    let pushed;
    try {
      pushed = await this.deps.publisher.push(repo, task.caseId, revision);
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      const finding = classifyBlocker({ exitCode: null, output: e.stderrTail });
      throw new Blocked(
        finding?.kind === 'permissions' ? 'permissions' : 'repository_unavailable',
        `pushing ${revision} failed: ${e.stderrTail.trim().slice(-400)}`,
      );
    }
    let url: string | null = null;
    if (this.deps.draftPullRequests) {
      try {
        url = await this.deps.draftPullRequests.openOrUpdate(repo, {
          branch: pushed.branch,
          title: `caseloop: ${task.title} (case ${task.caseId})`,
          body: `Prepared by caseloop for case ${task.caseId} at ${revision}. Draft: a human reviews and merges; caseloop never does.`,
        });
      } catch (e) {
        // The pushed branch is the result; a draft PR is a convenience and is retried on the next push.
        this.deps.logger.warn(
          { caseId: task.caseId, err: (e as Error).message },
          'draft pull request not opened',
        );
      }
    }
    return [
      draft('BranchPushed', {
        taskId: task.taskId,
        branch: pushed.branch,
        revision,
        baseRevision: task.baseRevision as string,
        created: pushed.created,
        draftPullRequestUrl: url,
      }),
    ];
  }
}
