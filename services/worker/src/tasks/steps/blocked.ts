import { draft, EventData, EventDraft } from '@caseloop/contracts';
import { GitError } from '../../worktrees/git.adapter';
import { TaskView } from '../task.state';

type BlockerKind = EventData<'BlockerRaised'>['kind'];

/** A step that cannot go on: recorded as a blocker, never thrown to the transport. */
export class Blocked extends Error {
  constructor(
    readonly kind: 'repository_unavailable' | 'invalid_input' | 'worktree_lost' | 'permissions',
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** Runs a git operation; a failure of git itself becomes the blocker `toBlocked` names, anything else (a held lock too) passes. */
export async function blockOnGitError<T>(
  work: () => Promise<T>,
  toBlocked: (e: GitError) => Blocked,
): Promise<T> {
  try {
    return await work();
  } catch (e) {
    // A lock held by a live git is a wait, not a blocker: the transport retries.
    if (e instanceof GitError && e.code !== 'git_locked') throw toBlocked(e);
    throw e;
  }
}

/** Blocker events, their details redacted: the one place a `Blocked` becomes an event. */
export class Blockers {
  constructor(private readonly redact: (text: string) => string) {}

  raised(task: TaskView, kind: BlockerKind, detail: string): EventDraft {
    return draft('BlockerRaised', {
      taskId: task.taskId,
      kind,
      detail: this.redact(detail).slice(0, 2000) || kind,
    });
  }

  /** The events of a step, or the blocker that stopped it. */
  async settle(task: TaskView, work: () => Promise<EventDraft[]>): Promise<EventDraft[]> {
    try {
      return await work();
    } catch (e) {
      if (e instanceof Blocked) return [this.raised(task, e.kind, e.detail)];
      throw e;
    }
  }
}
