import { assertSafeId, draft, EventDraft } from '@caseloop/contracts';
import { ConcurrencyError } from '@caseloop/ledger';
import { KeyedMutex } from '../worktrees/keyed-mutex';
import { AttemptStep } from './steps/attempt.step';
import { Blockers } from './steps/blocked';
import { ChecksStep } from './steps/checks.step';
import { PublishStep } from './steps/publish.step';
import { RevisionStep } from './steps/revision.step';
import { AppendNow, Cause, RunState, routingPolicy, TaskProcessorDeps } from './steps/step.context';
import { TargetHeadLook, WatchOutcome } from './steps/target-head.look';
import { TargetWorkspace } from './steps/target.workspace';
import { TaskRecorder } from './steps/task.recorder';
import { WorktreeStep } from './steps/worktree.step';
import { nextStep, TaskStep } from './task.decider';
import { foldTask, TaskView } from './task.state';

export type { Cause, TaskLogger, TaskProcessorDeps } from './steps/step.context';
export { WorkerStopping } from './steps/step.context';
export type { WatchOutcome } from './steps/target-head.look';

/** Enough steps for every attempt, check run and push of a case; more means a decision loop. */
const MAX_STEPS = 200;

/**
 * Drives one case's task: load the case, fold the worker's view, decide the next step, do it,
 * append its events, and again, until nothing is left to do. Everything it knows comes from the
 * ledger, so a redelivered event or a restarted worker continues exactly where the case is:
 * a finished attempt is never re-run, an interrupted one is re-run in the same worktree.
 *
 * Each step is done by its own part (steps/): the worktree, the revision check, the attempt, the
 * checks, the push; a step that cannot go on throws `Blocked`, which becomes a blocker event here.
 */
export class TaskProcessor {
  private readonly mutex = new KeyedMutex();
  private readonly state = new RunState();
  private readonly recorder: TaskRecorder;
  private readonly blockers: Blockers;
  private readonly worktree: WorktreeStep;
  private readonly revision: RevisionStep;
  private readonly attempt: AttemptStep;
  private readonly checks: ChecksStep;
  private readonly publish: PublishStep;
  private readonly targets: TargetHeadLook;

  constructor(private readonly deps: TaskProcessorDeps) {
    const workspace = new TargetWorkspace(deps);
    this.recorder = new TaskRecorder(deps, this.state);
    this.blockers = new Blockers(deps.redact);
    this.worktree = new WorktreeStep(deps, workspace);
    this.revision = new RevisionStep(deps, workspace, this.blockers);
    this.checks = new ChecksStep(deps, workspace, this.blockers);
    this.attempt = new AttemptStep(deps, workspace, this.checks, this.blockers, this.state);
    this.publish = new PublishStep(deps, workspace);
    this.targets = new TargetHeadLook(deps, {
      mutex: this.mutex,
      state: this.state,
      workspace,
      revision: this.revision,
      blockers: this.blockers,
      recorder: this.recorder,
    });
  }

  /** From now on nothing is recorded: outcomes of processes killed by the shutdown are not outcomes. */
  stop(): void {
    this.state.stop();
  }

  async process(caseId: string, cause: Cause): Promise<string> {
    assertSafeId('caseId', caseId);
    // The transport serializes per case; a redelivery during a long attempt still waits here.
    return this.mutex.run(caseId, () => this.drive(caseId, cause));
  }

  /** One look at the target branch of every case awaiting review (see `TargetHeadLook`). */
  watchTargets(): Promise<Record<string, WatchOutcome>> {
    return this.targets.look();
  }

  private async drive(caseId: string, cause: Cause): Promise<string> {
    for (let i = 0; i < MAX_STEPS; i++) {
      this.state.assertRunning();
      const loaded = await this.deps.store.load('case', caseId);
      const state = foldTask(loaded.events);
      const step = nextStep(state, routingPolicy(this.deps));
      if (step.kind === 'idle') return step.reason;
      const task = state as TaskView;
      this.deps.logger.info({ caseId, taskId: task.taskId, step: step.kind }, 'task step');
      const append = (events: EventDraft[], tag: string, expectedSeq: number): Promise<number> =>
        this.recorder.record(task, cause, events, tag, expectedSeq);
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

  /** The step's events; a step stopped by `Blocked` answers the blocker instead. */
  private async execute(
    step: Exclude<TaskStep, { kind: 'idle' }>,
    task: TaskView,
    appendNow: AppendNow,
  ): Promise<{ events: EventDraft[]; seqTag?: number }> {
    // Set once an attempt's start is recorded: its outcome (or its blocker) is tagged by that sequence.
    // A blocked attempt never ran; it stays started and runs when the task is resumed.
    let seqTag: number | undefined;
    const events = await this.blockers.settle(task, async () => {
      switch (step.kind) {
        case 'prepare':
          return this.worktree.prepare(task);
        case 'check_revision':
          return this.revision.check(task);
        case 'resume_attempt': {
          const { attemptId, attempt, route, fromCleanTree } = step.attempt;
          return this.attempt.run(task, { attemptId, attempt, route: route.kind, fromCleanTree }, appendNow);
        }
        case 'attempt':
          seqTag = await this.attempt.start(task, step, appendNow);
          return this.attempt.run(task, step, appendNow);
        case 'run_checks':
          return this.checks.rerun(task, step.revision, appendNow);
        case 'push':
          return this.publish.push(task, step.revision);
        case 'give_up':
          return [draft('BlockerRaised', { taskId: task.taskId, kind: step.blocker, detail: step.detail })];
        case 'cleanup':
          return this.worktree.cleanup(task, step.reason);
      }
    });
    return { events, seqTag };
  }
}
