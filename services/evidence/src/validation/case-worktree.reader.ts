import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { assertSafeId } from '@caseloop/contracts';

const REVISION = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export type WorktreeStanding = { status: 'ready'; path: string } | { status: 'unusable'; reason: string };

/**
 * Reads the worker's case worktree (`<worktrees>/<caseId>`) without changing it. The client phase
 * may only run on the exact revision the checks passed on, from a clean tree: otherwise the
 * captures would prove some other code.
 */
export class CaseWorktreeReader {
  constructor(private readonly worktreesDir: string) {}

  pathOf(caseId: string): string {
    return join(this.worktreesDir, assertSafeId('caseId', caseId));
  }

  async standing(caseId: string, revision: string): Promise<WorktreeStanding> {
    const path = this.pathOf(caseId);
    const head = await git(path, ['rev-parse', 'HEAD']).catch(() => null);
    if (head === null) return { status: 'unusable', reason: 'the case worktree is missing' };
    if (head.trim() !== revision) {
      return {
        status: 'unusable',
        reason: `the case worktree is at ${head.trim().slice(0, 12)}, not the validated revision ${revision.slice(0, 12)}`,
      };
    }
    const dirty = await git(path, ['status', '--porcelain', '--untracked-files=no']).catch(() => 'unknown');
    if (dirty.trim() !== '')
      return { status: 'unusable', reason: 'the case worktree has uncommitted changes' };
    return { status: 'ready', path };
  }

  /** The change under review: from where it left the target branch to the validated revision. */
  async diff(caseId: string, base: string, revision: string): Promise<string | null> {
    if (!REVISION.test(base) || !REVISION.test(revision)) throw new RangeError('diff needs full revisions');
    return git(this.pathOf(caseId), ['diff', '--no-color', '--no-ext-diff', `${base}...${revision}`]).catch(
      () => null,
    );
  }
}

function git(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd,
        maxBuffer: 16 * 1024 * 1024,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_TERMINAL_PROMPT: '0' },
      },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    );
  });
}
