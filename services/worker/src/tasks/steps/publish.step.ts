import { draft, EventDraft } from '@caseloop/contracts';
import { classifyBlocker } from '../../routing/blocker.classifier';
import { TaskView } from '../task.state';
import { Blocked, blockOnGitError } from './blocked';
import { TaskProcessorDeps } from './step.context';
import { TargetWorkspace } from './target.workspace';

/** The proven revision pushed to the case branch, and a draft pull request opened for it where configured. */
export class PublishStep {
  constructor(
    private readonly deps: Pick<TaskProcessorDeps, 'publisher' | 'draftPullRequests' | 'logger'>,
    private readonly workspace: TargetWorkspace,
  ) {}

  async push(task: TaskView, revision: string): Promise<EventDraft[]> {
    const repo = this.workspace.repositoryOf(task);
    const pushed = await blockOnGitError(
      () => this.deps.publisher.push(repo, task.caseId, revision),
      (e) => {
        const finding = classifyBlocker({ exitCode: null, output: e.stderrTail });
        return new Blocked(
          finding?.kind === 'permissions' ? 'permissions' : 'repository_unavailable',
          `pushing ${revision} failed: ${e.stderrTail.trim().slice(-400)}`,
        );
      },
    );
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
