import { draft, EventDraft } from '@caseloop/contracts';
import { TaskView } from '../task.state';
import { Blockers } from './blocked';
import { TaskProcessorDeps } from './step.context';
import { TargetWorkspace } from './target.workspace';

/**
 * After a resume (or a move seen by the target watch): the case branch rebased onto the target
 * head, and what was found recorded as `TargetRevisionChecked` (a conflict also as a blocker).
 */
export class RevisionStep {
  constructor(
    private readonly deps: Pick<TaskProcessorDeps, 'worktrees'>,
    private readonly workspace: TargetWorkspace,
    private readonly blockers: Blockers,
  ) {}

  /** `fetched`: the target head, when the caller has just fetched it. */
  async check(task: TaskView, fetched?: string): Promise<EventDraft[]> {
    const repo = this.workspace.repositoryOf(task);
    const head = fetched ?? (await this.workspace.sync(repo));
    const recorded = task.baseRevision as string;
    await this.workspace.worktreeOf(task, repo);
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
      this.blockers.raised(
        task,
        'conflict',
        `the case branch no longer applies to ${repo.targetBranch} at ${head}; a human must resolve the conflict`,
      ),
    ];
  }
}
