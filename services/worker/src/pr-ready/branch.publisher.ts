import { TargetRepository } from '@caseloop/target-repositories';
import { Git } from '../worktrees/git.adapter';
import { caseBranch, WorktreeManager } from '../worktrees/worktree.manager';

export interface PushOutcome {
  branch: string;
  revision: string;
  /** False when the remote branch already pointed at this revision: nothing was pushed. */
  created: boolean;
}

/**
 * Puts the case branch on the repository's remote. Idempotent: when the remote branch already
 * points at the revision nothing is pushed, so a redelivered task never creates a second push.
 * A rebased branch replaces the remote one only if the remote still holds what this worker saw
 * (`--force-with-lease`), so a human's push to the same branch is never overwritten blindly.
 */
export class BranchPublisher {
  constructor(
    private readonly git: Git,
    private readonly worktrees: WorktreeManager,
  ) {}

  async remoteRevision(repo: TargetRepository, branch: string): Promise<string | null> {
    const r = await this.git.run(['ls-remote', '--heads', 'origin', `refs/heads/${branch}`], {
      cwd: this.worktrees.mirrorPath(repo),
      credentialsFile: repo.credentialsFile,
    });
    const line = r.stdout.split('\n').find((l) => l.endsWith(`\trefs/heads/${branch}`));
    return line ? (line.split('\t')[0] ?? null) : null;
  }

  async push(repo: TargetRepository, caseId: string, revision: string): Promise<PushOutcome> {
    const branch = caseBranch(caseId);
    const remote = await this.remoteRevision(repo, branch);
    if (remote === revision) return { branch, revision, created: false };
    await this.git.run(
      [
        'push',
        '--quiet',
        '--porcelain',
        `--force-with-lease=refs/heads/${branch}:${remote ?? ''}`,
        'origin',
        `${revision}:refs/heads/${branch}`,
      ],
      { cwd: this.worktrees.mirrorPath(repo), credentialsFile: repo.credentialsFile },
    );
    return { branch, revision, created: true };
  }
}

/** The commit message names the case, so the branch explains itself in any git tool. */
export const attemptCommitMessage = (title: string, caseId: string, attempt: number): string =>
  `caseloop: ${title.replace(/\s+/g, ' ').trim().slice(0, 120)} (case ${caseId})\n\nAttempt ${attempt}.`;
