import { TargetRepository } from '@caseloop/target-repositories';
import { draft, EventDraft } from '@caseloop/contracts';
import { CheckProgress, CheckRun } from '../../checks/checks.runner';
import { TaskView } from '../task.state';
import { Blockers } from './blocked';
import { AppendNow, TaskProcessorDeps } from './step.context';
import { TargetWorkspace } from './target.workspace';

/** Where the checks run: the case's repository and worktree, at the revision they prove. */
export interface ChecksAt {
  repo: TargetRepository;
  path: string;
  revision: string;
  /** The attempt whose change is checked; null for a re-run of the checks on their own. */
  attemptId: string | null;
}

/** The repository's checks on a revision of the case branch, each one's progress recorded as it runs. */
export class ChecksStep {
  constructor(
    private readonly deps: Pick<TaskProcessorDeps, 'worktrees' | 'checks'>,
    private readonly workspace: TargetWorkspace,
    private readonly blockers: Blockers,
  ) {}

  /** The checks once more on an already recorded revision (after a rebase, say). */
  async rerun(task: TaskView, revision: string, appendNow: AppendNow): Promise<EventDraft[]> {
    const repo = this.workspace.repositoryOf(task);
    const path = await this.workspace.worktreeOf(task, repo);
    if ((await this.deps.worktrees.head(task.caseId)) !== revision)
      await this.deps.worktrees.resetTo(task.caseId, revision);
    const targetHead = await this.workspace.sync(repo);
    const runs = await this.run(task, { repo, path, revision, attemptId: null }, appendNow);
    return this.completed(task, revision, targetHead, runs);
  }

  /**
   * Checks, then the tree put back to exactly the proven revision: a check that rewrote tracked
   * files (a formatter in write mode) must not leave the evidence service a tree that differs
   * from what the results name.
   */
  async run(task: TaskView, at: ChecksAt, appendNow: AppendNow): Promise<CheckRun[]> {
    const progress = this.progress(task, at.revision, at.attemptId, appendNow);
    const runs = await this.deps.checks.runAll(at.repo, task.caseId, at.path, at.revision, progress);
    if (await this.deps.worktrees.isIntact(task.caseId))
      await this.deps.worktrees.resetTo(task.caseId, at.revision);
    return runs;
  }

  /** `ChecksCompleted`, and a blocker when a check failed for a reason outside the change. */
  completed(task: TaskView, revision: string, targetHead: string, runs: CheckRun[]): EventDraft[] {
    const results = runs.map((r) => r.result);
    const passed = results.every((r) => r.outcome === 'passed' || r.outcome === 'skipped');
    const events: EventDraft[] = [
      draft('ChecksCompleted', { taskId: task.taskId, revision, targetHead, results, passed }),
    ];
    const env = runs.find((r) => r.blocker);
    if (env?.blocker) {
      events.push(
        this.blockers.raised(
          task,
          env.blocker.kind,
          `check "${env.result.name}" failed at ${revision}: ${env.blocker.reason}. This is not a fault of the change; a human must fix the environment.`,
        ),
      );
    }
    return events;
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
}
