import { EventDraft } from '@caseloop/contracts';
import { TargetRepository } from '@caseloop/target-repositories';
import { KeyedMutex } from '../../worktrees/keyed-mutex';
import { watchesTarget } from '../task.decider';
import { foldTask } from '../task.state';
import { Blocked, Blockers } from './blocked';
import { RevisionStep } from './revision.step';
import { RunState, routingPolicy, TaskProcessorDeps, WorkerStopping } from './step.context';
import { TargetWorkspace } from './target.workspace';
import { TaskRecorder } from './task.recorder';

/** What one look at a case's target branch found (see `TaskProcessor.watchTargets`). */
export type WatchOutcome = 'not_watched' | 'unchanged' | 'moved' | 'unreachable' | 'failed';

/** The parts of the worker one look at the target branches works with. */
export interface TargetHeadLookParts {
  mutex: KeyedMutex;
  state: RunState;
  workspace: TargetWorkspace;
  revision: RevisionStep;
  blockers: Blockers;
  recorder: TaskRecorder;
}

/**
 * One look at the target branch of every case that has a worktree here and awaits review
 * (`watchesTarget`); each repository is fetched once per look. A case whose head moved away from
 * the revision its proof stands on gets the same check as after a resume (rebase, then
 * `TargetRevisionChecked`), which the coordinator answers like any move: the proof is stale and
 * the task resumes. Nothing is appended while the head stays put, and after a report the task
 * stands on the new head (or is blocked by a conflict), so each new head is reported once.
 */
export class TargetHeadLook {
  constructor(
    private readonly deps: Pick<
      TaskProcessorDeps,
      'store' | 'worktrees' | 'logger' | 'redact' | 'routes' | 'now'
    >,
    private readonly parts: TargetHeadLookParts,
  ) {}

  async look(): Promise<Record<string, WatchOutcome>> {
    const heads = new Map<string, Promise<string>>();
    const headOf = (repo: TargetRepository): Promise<string> => {
      const key = `${repo.id}\n${repo.targetBranch}`;
      const head = heads.get(key) ?? this.parts.workspace.sync(repo);
      heads.set(key, head);
      return head;
    };
    const outcomes: Record<string, WatchOutcome> = {};
    for (const caseId of await this.deps.worktrees.caseIds()) {
      this.parts.state.assertRunning();
      try {
        outcomes[caseId] = await this.lookAt(caseId, headOf);
      } catch (e) {
        if (e instanceof WorkerStopping) throw e;
        // One case's trouble (the ledger, git itself) leaves the others watched; the next look retries it.
        this.deps.logger.warn({ caseId, err: this.deps.redact((e as Error).message) }, 'target watch failed');
        outcomes[caseId] = 'failed';
      }
    }
    return outcomes;
  }

  private async lookAt(
    caseId: string,
    headOf: (repo: TargetRepository) => Promise<string>,
  ): Promise<WatchOutcome> {
    const { mutex, state, workspace, revision, blockers, recorder } = this.parts;
    // Decided before taking the case's lock: a case in a long attempt is not watched and must not stall the look.
    if (
      !watchesTarget(foldTask((await this.deps.store.load('case', caseId)).events), routingPolicy(this.deps))
    )
      return 'not_watched';
    return mutex.run(caseId, async () => {
      state.assertRunning();
      const loaded = await this.deps.store.load('case', caseId);
      const task = foldTask(loaded.events);
      if (!watchesTarget(task, routingPolicy(this.deps))) return 'not_watched';
      let head: string;
      try {
        head = await headOf(workspace.repositoryOf(task));
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
      const events: EventDraft[] = await blockers.settle(task, () => revision.check(task, head));
      await recorder.record(
        task,
        task.awaitingReview,
        events,
        `watch-${task.lastSeq}`,
        loaded.lastSeqByProducer.worker ?? 0,
      );
      return 'moved';
    });
  }
}
