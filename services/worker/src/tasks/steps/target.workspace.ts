import { branchName, TargetRepository } from '@caseloop/target-repositories';
import { TaskView } from '../task.state';
import { Blocked, blockOnGitError } from './blocked';
import { TaskProcessorDeps } from './step.context';

/**
 * The sync step every other step starts from: the task's repository, its target branch fetched,
 * and the case's worktree present on the case branch.
 */
export class TargetWorkspace {
  constructor(private readonly deps: Pick<TaskProcessorDeps, 'repositories' | 'worktrees'>) {}

  /** The task's repository with the task's target branch, or a blocker naming what is wrong. */
  repositoryOf(task: TaskView): TargetRepository {
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

  /** Fetches the target branch; answers its head. */
  sync(repo: TargetRepository): Promise<string> {
    return blockOnGitError(
      async () => {
        await this.deps.worktrees.sync(repo);
        return await this.deps.worktrees.targetHead(repo);
      },
      (e) =>
        new Blocked(
          'repository_unavailable',
          `fetching ${repo.targetBranch} of repository "${repo.id}" failed: ${e.stderrTail.trim().slice(-400) || e.code}`,
        ),
    );
  }

  /** The worktree exists and is on the case branch (re-attached from the mirror after a restart if needed). */
  async worktreeOf(task: TaskView, repo: TargetRepository): Promise<string> {
    const base = task.baseRevision ?? task.assignedRevision;
    if (!base)
      throw new Blocked(
        'worktree_lost',
        'the case has no recorded base revision to rebuild its worktree from',
      );
    if (await this.deps.worktrees.isIntact(task.caseId)) return this.deps.worktrees.worktreePath(task.caseId);
    return blockOnGitError(
      async () => (await this.deps.worktrees.prepare(repo, task.caseId, base)).path,
      (e) =>
        new Blocked(
          'worktree_lost',
          `the worktree of case ${task.caseId} could not be restored: ${e.message.slice(0, 400)}`,
        ),
    );
  }
}
