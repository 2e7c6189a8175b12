import { createHash } from 'node:crypto';
import { mkdir, readdir, realpath, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { assertSafeId, isSafeId } from '@caseloop/contracts';
import { TargetRepository } from '@caseloop/target-repositories';
import { Git, GitError } from './git.adapter';
import { KeyedMutex } from './keyed-mutex';

export const caseBranch = (caseId: string): string => `caseloop/${assertSafeId('caseId', caseId)}`;

export interface PreparedWorktree {
  path: string;
  branch: string;
  /** The commit the case branch was created from (the task's target revision). */
  baseRevision: string;
  /** The worktree already existed (a restarted worker, a redelivered task). */
  reused: boolean;
}

export type RebaseOutcome = { outcome: 'rebased'; revision: string } | { outcome: 'conflict' };

export interface DiffDigest {
  sha256: string;
  bytes: number;
}

/**
 * One local mirror per repository, one worktree per case. Every path is derived from a validated id
 * (`assertSafeId`), so a case id can never name a path outside the worker's directories.
 *
 * The mirror is a bare repository whose fetch writes `refs/remotes/origin/*`, not a `--mirror`
 * clone: a mirror fetch prunes every local ref the remote lacks, and the case branches live here.
 */
export class WorktreeManager {
  private readonly mutex: KeyedMutex;

  constructor(
    private readonly git: Git,
    private readonly dirs: { mirrors: string; worktrees: string },
  ) {
    // Replicas may share the directory: the mirror's lock file serializes them too.
    this.mutex = new KeyedMutex((id) => join(dirs.mirrors, `${assertSafeId('repository', id)}.lock`));
  }

  mirrorPath(repo: Pick<TargetRepository, 'id'>): string {
    return join(this.dirs.mirrors, `${assertSafeId('repository', repo.id)}.git`);
  }

  worktreePath(caseId: string): string {
    return join(this.dirs.worktrees, assertSafeId('caseId', caseId));
  }

  /** The cases that have a worktree here: the live tasks of this worker directory. */
  async caseIds(): Promise<string[]> {
    const entries = await readdir(this.dirs.worktrees, { withFileTypes: true }).catch((e: unknown) => {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    });
    return entries.filter((d) => d.isDirectory() && isSafeId(d.name)).map((d) => d.name);
  }

  /** Creates the mirror if needed and fetches the target branch. Throws GitError if the remote is gone. */
  async sync(repo: TargetRepository): Promise<void> {
    const mirror = this.mirrorPath(repo);
    await this.mutex.run(repo.id, async () => {
      if (!(await exists(join(mirror, 'HEAD')))) {
        await mkdir(mirror, { recursive: true });
        await this.git.run(['init', '--quiet', '--bare'], { cwd: mirror });
        await this.git.run(['remote', 'add', 'origin', repo.url], { cwd: mirror });
      } else {
        await this.git.run(['remote', 'set-url', 'origin', repo.url], { cwd: mirror });
      }
      await this.git.run(
        [
          'fetch',
          '--quiet',
          '--prune',
          '--no-tags',
          'origin',
          `+refs/heads/${repo.targetBranch}:refs/remotes/origin/${repo.targetBranch}`,
        ],
        { cwd: mirror, credentialsFile: repo.credentialsFile },
      );
    });
  }

  /** The target branch head as last fetched. */
  async targetHead(repo: TargetRepository): Promise<string> {
    const r = await this.git.run(
      ['rev-parse', '--verify', `refs/remotes/origin/${repo.targetBranch}^{commit}`],
      { cwd: this.mirrorPath(repo) },
    );
    return r.stdout.trim();
  }

  /**
   * A revision that is not on the target branch (a commit, a branch or a tag of the remote), fetched
   * into the mirror; its full commit id, or null when the remote has no such revision.
   */
  async fetchRevision(repo: TargetRepository, revision: string): Promise<string | null> {
    const mirror = this.mirrorPath(repo);
    return this.mutex.run(repo.id, async () => {
      const local = await this.git.run(['rev-parse', '--verify', '--quiet', `${revision}^{commit}`], {
        cwd: mirror,
        allowFailure: true,
      });
      if (local.exitCode === 0 && (await this.complete(mirror, local.stdout.trim())))
        return local.stdout.trim();
      const fetched = await this.git.run(['fetch', '--quiet', '--no-tags', 'origin', '--', revision], {
        cwd: mirror,
        credentialsFile: repo.credentialsFile,
        allowFailure: true,
      });
      if (fetched.exitCode !== 0) return null;
      const head = await this.git.run(['rev-parse', '--verify', 'FETCH_HEAD^{commit}'], { cwd: mirror });
      return head.stdout.trim();
    });
  }

  async hasCommit(repo: TargetRepository, revision: string): Promise<boolean> {
    return this.complete(this.mirrorPath(repo), revision);
  }

  /**
   * The commit and everything it needs are in the mirror. A commit object alone is not enough: a
   * fetch killed while unpacking (small fetches are written as loose objects, one by one) can leave
   * a commit without its tree. What a ref reaches is complete (a ref moves only after the fetch
   * checked connectivity), so only what lies beyond the refs is walked.
   */
  private async complete(mirror: string, revision: string): Promise<boolean> {
    const sha = await this.git.run(
      ['rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`],
      {
        cwd: mirror,
        allowFailure: true,
      },
    );
    if (sha.exitCode !== 0) return false;
    const r = await this.git.run(['rev-list', '--quiet', '--objects', sha.stdout.trim(), '--not', '--all'], {
      cwd: mirror,
      allowFailure: true,
    });
    return r.exitCode === 0;
  }

  /** The case's worktree on `caseloop/<caseId>`: found again, re-attached to its branch, or created at `revision`. */
  async prepare(repo: TargetRepository, caseId: string, revision: string): Promise<PreparedWorktree> {
    const path = this.worktreePath(caseId);
    const branch = caseBranch(caseId);
    const mirror = this.mirrorPath(repo);
    return this.mutex.run(repo.id, async () => {
      if (await this.isIntact(caseId)) return { path, branch, baseRevision: revision, reused: true };
      await rm(path, { recursive: true, force: true });
      await this.git.run(['worktree', 'prune'], { cwd: mirror });
      await mkdir(this.dirs.worktrees, { recursive: true });
      const branchExists =
        (
          await this.git.run(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], {
            cwd: mirror,
            allowFailure: true,
          })
        ).exitCode === 0;
      if (branchExists) {
        // The worktree was lost but the branch (with every committed attempt) is in the mirror.
        await this.git.run(['worktree', 'add', '--quiet', path, branch], { cwd: mirror });
        return { path, branch, baseRevision: revision, reused: true };
      }
      await this.git.run(['worktree', 'add', '--quiet', '-b', branch, path, revision], { cwd: mirror });
      return { path, branch, baseRevision: revision, reused: false };
    });
  }

  /** The worktree exists, is a git worktree at its own path, on its own branch. */
  async isIntact(caseId: string): Promise<boolean> {
    const path = this.worktreePath(caseId);
    if (!(await exists(join(path, '.git')))) return false;
    const top = await this.git
      .run(['rev-parse', '--show-toplevel'], { cwd: path, allowFailure: true })
      .catch(() => null);
    if (!top || top.exitCode !== 0 || top.stdout.trim() !== (await realpath(path).catch(() => path)))
      return false;
    const head = await this.git.run(['symbolic-ref', '--quiet', 'HEAD'], { cwd: path, allowFailure: true });
    return head.stdout.trim() === `refs/heads/${caseBranch(caseId)}`;
  }

  async head(caseId: string): Promise<string> {
    return (
      await this.git.run(['rev-parse', '--verify', 'HEAD^{commit}'], { cwd: this.worktreePath(caseId) })
    ).stdout.trim();
  }

  /** Commits everything the attempt changed. Returns the new revision, or null when nothing changed. */
  async commitAll(caseId: string, message: string): Promise<string | null> {
    const cwd = this.worktreePath(caseId);
    await this.git.run(['add', '--all'], { cwd });
    const staged = await this.git.run(['diff', '--cached', '--quiet'], { cwd, allowFailure: true });
    if (staged.exitCode === 0) return null;
    await this.git.run(['commit', '--quiet', '--no-verify', '--no-gpg-sign', '-m', message], { cwd });
    return this.head(caseId);
  }

  /** sha-256 and size of the whole change of the case branch against `base`. */
  async diffDigest(caseId: string, base: string): Promise<DiffDigest> {
    const hash = createHash('sha256');
    let bytes = 0;
    await this.git.run(['diff', '--binary', '--no-color', '--no-ext-diff', base, 'HEAD'], {
      cwd: this.worktreePath(caseId),
      onStdout: (c) => {
        hash.update(c);
        bytes += c.length;
      },
    });
    return { sha256: hash.digest('hex'), bytes };
  }

  /**
   * Back to a known commit: tracked changes and untracked files go. Ignored files (installed
   * dependencies, build caches) stay unless `pristine`: an escalation starts from nothing that
   * earlier attempts left behind.
   */
  async resetTo(
    caseId: string,
    revision: string,
    mode: 'keep_ignored' | 'pristine' = 'keep_ignored',
  ): Promise<void> {
    const cwd = this.worktreePath(caseId);
    await this.git.run(['reset', '--quiet', '--hard', revision], { cwd });
    await this.git.run(['clean', mode === 'pristine' ? '-ffdxq' : '-ffdq'], { cwd });
  }

  /** Replays the case's commits from `oldBase` onto `newBase`. A conflict is aborted and reported. */
  async rebase(caseId: string, oldBase: string, newBase: string): Promise<RebaseOutcome> {
    const cwd = this.worktreePath(caseId);
    await this.resetTo(caseId, 'HEAD');
    const r = await this.git.run(['rebase', '--quiet', '--no-autosquash', '--onto', newBase, oldBase], {
      cwd,
      allowFailure: true,
    });
    if (r.exitCode !== 0) {
      await this.git.run(['rebase', '--abort'], { cwd, allowFailure: true });
      return { outcome: 'conflict' };
    }
    return { outcome: 'rebased', revision: await this.head(caseId) };
  }

  /** Removes a finished case's worktree. The branch stays: it is the PR-ready result. */
  async remove(repo: TargetRepository | null, caseId: string): Promise<void> {
    const path = this.worktreePath(caseId);
    if (repo && (await exists(join(this.mirrorPath(repo), 'HEAD')))) {
      const mirror = this.mirrorPath(repo);
      await this.mutex.run(repo.id, async () => {
        await this.git.run(['worktree', 'remove', '--force', path], { cwd: mirror, allowFailure: true });
        await rm(path, { recursive: true, force: true });
        await this.git.run(['worktree', 'prune'], { cwd: mirror });
      });
    } else {
      await rm(path, { recursive: true, force: true });
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

export { GitError };
