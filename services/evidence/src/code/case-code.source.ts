import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { assertSafeId } from '@caseloop/contracts';
import { Git, GitError, installAskpass, withFileLock } from '@caseloop/platform';
import type { TargetRepository } from '@caseloop/target-repositories';

const REVISION = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The case branch the worker pushes a proven revision to (see `BranchPushed`). */
export const caseBranch = (caseId: string): string => `caseloop/${assertSafeId('caseId', caseId)}`;

export type CaseCheckout =
  { status: 'ready'; path: string; release(): Promise<void> } | { status: 'unusable'; reason: string };

/**
 * Where the evidence service gets the code it proves: from the repository's remote, never from
 * another service's disk. Read only: nothing here pushes.
 */
export interface CaseCodeSource {
  /** Fetches the case branch; `absent` while the revision is not (yet) on the remote. */
  fetch(repo: TargetRepository, caseId: string, revision: string): Promise<'present' | 'absent'>;
  /** A clean tree of exactly `revision`, for the client to run from; released after the phase. */
  checkout(repo: TargetRepository, caseId: string, revision: string): Promise<CaseCheckout>;
  /** The change under review: from where it left the target branch to the validated revision. */
  diff(repo: TargetRepository, base: string, revision: string): Promise<string | null>;
}

export class CaseCodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CaseCodeError';
  }
}

/** Instances in this process so far: each gets its own checkouts directory. */
let instances = 0;
/** The host part of a checkouts directory's name (`<host>-<pid>-<n>`). */
const HOST = hostname().replace(/[^A-Za-z0-9.-]/g, '_') || 'host';
const OWNER_DIR = /^(.+)-(\d+)-(\d+)$/;

/**
 * A bare mirror per repository under the evidence service's own directory, fetched from the
 * remote at the case branch; checkouts are detached worktrees of that mirror at one revision.
 * Fetches into one mirror are serialized; different repositories proceed in parallel.
 *
 * Replicas may share the directory (one volume): each instance keeps its checkouts under
 * `checkouts/<host>-<pid>-<n>/`, so two replicas proving the same revision at once (its
 * `ChecksCompleted` on one, its `BranchPushed` on the other) never remove or replace the tree the
 * other's client runs from. Checkouts left by a process of this host that is gone are removed.
 */
export class GitCaseCode implements CaseCodeSource {
  private readonly queues = new Map<string, Promise<unknown>>();
  private runner: Promise<Git> | null = null;
  private readonly owner = `${HOST}-${process.pid}-${instances++}`;
  private swept: Promise<void> | null = null;

  constructor(
    private readonly opts: {
      dir: string;
      timeoutMs: number;
      inheritedEnv?: Readonly<Record<string, string | undefined>>;
      /**
       * A git lock file under `dir` untouched this long was left by a git that died (a killed
       * replica, a git killed at its timeout) and is removed; default 30 s.
       */
      staleLockMs?: number;
      onStaleLockRemoved?: (lockPath: string, ageMs: number) => void;
    },
  ) {}

  /** Where the checkout of `revision` of a case lives while its client phase runs. */
  checkoutPath(caseId: string, revision: string): string {
    return join(this.checkouts(), `${assertSafeId('caseId', caseId)}-${revision.slice(0, 12)}`);
  }

  /** This instance's own checkouts: no other process (or instance) writes or removes anything here. */
  private checkouts(): string {
    return join(this.opts.dir, 'checkouts', this.owner);
  }

  async fetch(repo: TargetRepository, caseId: string, revision: string): Promise<'present' | 'absent'> {
    assertRevision(revision);
    return this.serial(repo.id, async () => {
      const mirror = await this.mirror(repo);
      if (await this.hasCommit(mirror, revision)) return 'present';
      const branch = caseBranch(caseId);
      const r = await this.git(mirror, repo, [
        'fetch',
        '--quiet',
        '--no-tags',
        '--force',
        repo.url,
        `+refs/heads/${branch}:refs/caseloop/${caseId}`,
      ]).catch((e: unknown) => {
        if (e instanceof GitError) return e;
        throw e;
      });
      if (r instanceof GitError) {
        // The branch is not pushed yet: the worker pushes right after the checks pass.
        if (/couldn't find remote ref|no such ref|not our ref/i.test(r.stderrTail)) return 'absent';
        throw new CaseCodeError(
          `fetching ${branch} of repository "${repo.id}" failed: ${(r.stderrTail.trim() || r.message).slice(-300)}`,
        );
      }
      return (await this.hasCommit(mirror, revision)) ? 'present' : 'absent';
    });
  }

  async checkout(repo: TargetRepository, caseId: string, revision: string): Promise<CaseCheckout> {
    assertRevision(revision);
    if ((await this.fetch(repo, caseId, revision)) === 'absent')
      return {
        status: 'unusable',
        reason: `revision ${revision.slice(0, 12)} is not on the case branch of the remote`,
      };
    const path = this.checkoutPath(caseId, revision);
    return this.serial(repo.id, async () => {
      const mirror = await this.mirror(repo);
      await this.sweepOnce();
      await this.removeWorktree(mirror, repo, path);
      await mkdir(this.checkouts(), { recursive: true });
      await this.git(mirror, repo, ['worktree', 'add', '--quiet', '--detach', '--force', path, revision]);
      const head = (await this.git(path, repo, ['rev-parse', 'HEAD'])).trim();
      if (head !== revision) {
        await this.removeWorktree(mirror, repo, path);
        return {
          status: 'unusable',
          reason: `the checkout is at ${head.slice(0, 12)}, not ${revision.slice(0, 12)}`,
        };
      }
      return {
        status: 'ready',
        path,
        release: () => this.serial(repo.id, () => this.removeWorktree(mirror, repo, path)),
      };
    });
  }

  async diff(repo: TargetRepository, base: string, revision: string): Promise<string | null> {
    if (!REVISION.test(base) || !REVISION.test(revision)) throw new RangeError('diff needs full revisions');
    const mirror = await this.mirror(repo);
    return this.git(mirror, repo, ['diff', '--no-color', '--no-ext-diff', `${base}...${revision}`]).catch(
      () => null,
    );
  }

  private async mirror(repo: TargetRepository): Promise<string> {
    const path = join(this.opts.dir, 'mirrors', `${encodeURIComponent(repo.id)}.git`);
    const exists = await stat(join(path, 'HEAD')).then(
      () => true,
      () => false,
    );
    if (!exists) {
      await mkdir(path, { recursive: true });
      await this.git(path, repo, ['init', '--quiet', '--bare']);
    }
    return path;
  }

  /**
   * Removes the checkouts of processes of this host that are gone (a killed replica's); their
   * worktree entries in the mirrors are pruned by the next `git worktree prune`. Another host's
   * are left alone: whether that process lives cannot be told from here.
   */
  private sweepOnce(): Promise<void> {
    this.swept ??= (async () => {
      const root = join(this.opts.dir, 'checkouts');
      const names = await readdir(root).catch(() => [] as string[]);
      for (const name of names) {
        const m = OWNER_DIR.exec(name);
        if (!m || m[1] !== HOST || name === this.owner) continue;
        const pid = Number(m[2]);
        if (pid === process.pid || alive(pid)) continue;
        await rm(join(root, name), { recursive: true, force: true }).catch(() => undefined);
      }
    })();
    return this.swept;
  }

  /**
   * The revision and everything it needs are in the mirror. A commit object alone is not enough: a
   * fetch killed while unpacking (small fetches are written as loose objects, one by one) can leave
   * the commit without its tree, and every checkout then fails with "unable to read tree". Objects
   * reachable from a ref are complete (a ref moves only after the fetch checked connectivity), so
   * only what lies beyond the refs is walked; a missing object fails the walk and the fetch runs.
   */
  private async hasCommit(mirror: string, revision: string): Promise<boolean> {
    return this.gitRaw(
      mirror,
      ['rev-list', '--quiet', '--objects', revision, '--not', '--all'],
      undefined,
    ).then(
      () => true,
      () => false,
    );
  }

  private async removeWorktree(mirror: string, repo: TargetRepository, path: string): Promise<void> {
    await this.git(mirror, repo, ['worktree', 'remove', '--force', path]).catch(() => undefined);
    await rm(path, { recursive: true, force: true });
    await this.git(mirror, repo, ['worktree', 'prune']).catch(() => undefined);
  }

  /** One at a time per repository in this process, and across replicas sharing the directory (a lock file). */
  private serial<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.queues.get(key) ?? Promise.resolve();
    const locked = async () => {
      const lock = join(this.opts.dir, 'mirrors', `${encodeURIComponent(key)}.lock`);
      await mkdir(dirname(lock), { recursive: true });
      return withFileLock(lock, work);
    };
    const run = before.then(locked, locked);
    this.queues.set(
      key,
      run.catch(() => undefined),
    );
    return run;
  }

  private async git(cwd: string, repo: TargetRepository, args: string[]): Promise<string> {
    return this.gitRaw(cwd, args, repo.credentialsFile);
  }

  /**
   * git through the platform's runner (no system or global config, hooks off, credentials only
   * through the askpass helper), at this service's timeout; a lock under `dir` that a dead git left
   * is removed and the command runs again, a live git's fails it (the event is redelivered).
   */
  private async gitRaw(cwd: string, args: string[], credentialsFile: string | undefined): Promise<string> {
    this.runner ??= installAskpass(join(this.opts.dir, 'askpass')).then(
      (askpassPath) =>
        new Git({
          askpassPath,
          inheritedEnv: this.opts.inheritedEnv ?? process.env,
          defaultTimeoutMs: this.opts.timeoutMs,
          staleLocks: {
            roots: [this.opts.dir],
            staleMs: this.opts.staleLockMs ?? 30_000,
            ...(this.opts.onStaleLockRemoved ? { onRemoved: this.opts.onStaleLockRemoved } : {}),
          },
        }),
    );
    return (await (await this.runner).run(args, { cwd, credentialsFile })).stdout;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function assertRevision(revision: string): void {
  if (!REVISION.test(revision)) throw new RangeError('a full revision is needed');
}
