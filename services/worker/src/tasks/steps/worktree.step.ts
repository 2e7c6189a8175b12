import { draft, EventData, EventDraft } from '@caseloop/contracts';
import { TaskView } from '../task.state';
import { Blocked } from './blocked';
import { TaskProcessorDeps } from './step.context';
import { TargetWorkspace } from './target.workspace';

/** The case's worktree: made at the task's revision when the task starts, removed when the case ends. */
export class WorktreeStep {
  constructor(
    private readonly deps: Pick<TaskProcessorDeps, 'repositories' | 'worktrees'>,
    private readonly workspace: TargetWorkspace,
  ) {}

  async prepare(task: TaskView): Promise<EventDraft[]> {
    const repo = this.workspace.repositoryOf(task);
    const head = await this.workspace.sync(repo);
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

  async cleanup(task: TaskView, reason: EventData<'WorktreeRemoved'>['reason']): Promise<EventDraft[]> {
    const repo = this.deps.repositories.get(task.repository) ?? null;
    await this.deps.worktrees.remove(repo, task.caseId);
    return [draft('WorktreeRemoved', { taskId: task.taskId, worktree: task.caseId, reason })];
  }
}
