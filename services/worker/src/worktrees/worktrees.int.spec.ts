import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TargetRepository } from '@caseloop/target-repositories';
import { BranchPublisher } from '../pr-ready/branch.publisher';
import { Git, GitError, installAskpass } from './git.adapter';
import { git, TestRemote } from './test-repository.fixture';
import { WorktreeManager } from './worktree.manager';

jest.setTimeout(60_000);

describe('worktrees on real git', () => {
  let root: string;
  let remote: TestRemote;
  let repo: TargetRepository;
  let gitAdapter: Git;
  let worktrees: WorktreeManager;
  let base: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'caseloop-worktrees-'));
    remote = new TestRemote(join(root, 'remote'));
    base = remote.commit({ 'app.txt': 'one\n', 'README.md': 'app\n' }, 'initial');
    repo = {
      id: 'webapp',
      url: remote.origin,
      targetBranch: 'main',
      checks: [{ name: 'true', kind: 'other', command: ['true'], timeoutMs: 5_000 }],
    };
    gitAdapter = new Git({
      askpassPath: await installAskpass(join(root, 'askpass')),
      inheritedEnv: process.env,
    });
    worktrees = new WorktreeManager(gitAdapter, {
      mirrors: join(root, 'mirrors'),
      worktrees: join(root, 'worktrees'),
    });
    await worktrees.sync(repo);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('two replicas sharing the directory (two managers, no shared queue) fetch and add worktrees one at a time', async () => {
    const dirs = { mirrors: join(root, 'mirrors'), worktrees: join(root, 'worktrees') };
    const replicas = [new WorktreeManager(gitAdapter, dirs), new WorktreeManager(gitAdapter, dirs)];
    // One replica fetches the target branch again and again while the other adds worktrees: without
    // a lock between them a fetch meets a half-made worktree ("bad object worktrees/…/HEAD").
    const [fetching, adding] = replicas as [WorktreeManager, WorktreeManager];
    let adding_done = false;
    const results = await Promise.allSettled([
      (async () => {
        // The remote moves on between fetches, so every fetch brings objects and checks connectivity.
        for (let n = 0; !adding_done; n++) {
          remote.commit({ [`moved-${n}.txt`]: `${n}\n` }, `moved ${n}`);
          await fetching.sync(repo);
        }
      })(),
      (async () => {
        try {
          for (let i = 0; i < 12; i++) await adding.prepare(repo, `Cshared${i}`, base);
        } finally {
          adding_done = true;
        }
      })(),
    ]);
    const failed = results.filter((r) => r.status === 'rejected').map((r) => String(r.reason).slice(0, 300));
    expect(failed).toEqual([]);
    for (let i = 0; i < 12; i++) expect(await worktrees.isIntact(`Cshared${i}`)).toBe(true);
    for (let i = 0; i < 12; i++) await worktrees.remove(repo, `Cshared${i}`);
  });

  it('gives two cases in parallel two worktrees that never see each other’s files', async () => {
    const [a, b] = await Promise.all([
      worktrees.prepare(repo, 'Calpha', base),
      worktrees.prepare(repo, 'Cbeta', base),
    ]);
    expect(a.path).not.toBe(b.path);
    expect(a).toMatchObject({ branch: 'caseloop/Calpha', reused: false, baseRevision: base });
    await Promise.all([writeFile(join(a.path, 'alpha.txt'), 'a'), writeFile(join(b.path, 'beta.txt'), 'b')]);
    const [ra, rb] = await Promise.all([
      worktrees.commitAll('Calpha', 'alpha'),
      worktrees.commitAll('Cbeta', 'beta'),
    ]);
    expect(ra).not.toBe(rb);
    expect(existsSync(join(a.path, 'beta.txt'))).toBe(false);
    expect(existsSync(join(b.path, 'alpha.txt'))).toBe(false);
    expect(git(a.path, 'log', '--format=%s', '-1')).toBe('alpha');
    expect(git(b.path, 'log', '--format=%s', '-1')).toBe('beta');
  });

  it('finds the same worktree again after a restart, and re-attaches a lost one to its branch', async () => {
    const again = await worktrees.prepare(repo, 'Calpha', base);
    expect(again).toMatchObject({ path: worktrees.worktreePath('Calpha'), reused: true });
    expect(await readFile(join(again.path, 'alpha.txt'), 'utf8')).toBe('a');

    await rm(again.path, { recursive: true, force: true });
    expect(await worktrees.isIntact('Calpha')).toBe(false);
    const reattached = await worktrees.prepare(repo, 'Calpha', base);
    expect(reattached.reused).toBe(true);
    expect(await readFile(join(reattached.path, 'alpha.txt'), 'utf8')).toBe('a');
  });

  it('hashes the whole change against the base: equal trees, equal digests', async () => {
    await worktrees.prepare(repo, 'Cdigest1', base);
    await worktrees.prepare(repo, 'Cdigest2', base);
    for (const id of ['Cdigest1', 'Cdigest2']) {
      await writeFile(join(worktrees.worktreePath(id), 'app.txt'), 'two\n');
      await worktrees.commitAll(id, `fix ${id}`);
    }
    const [d1, d2] = await Promise.all([
      worktrees.diffDigest('Cdigest1', base),
      worktrees.diffDigest('Cdigest2', base),
    ]);
    expect(d1.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(d1).toEqual(d2);
    expect(d1.bytes).toBeGreaterThan(0);
    expect(await worktrees.commitAll('Cdigest1', 'nothing')).toBeNull();
  });

  it('rebases the case branch when the target moved, and aborts a conflict', async () => {
    const w = await worktrees.prepare(repo, 'Cmove', base);
    await writeFile(join(w.path, 'feature.txt'), 'feature\n');
    await worktrees.commitAll('Cmove', 'feature');
    const moved = remote.commit({ 'other.txt': 'upstream\n' }, 'upstream moves');
    await worktrees.sync(repo);
    expect(await worktrees.targetHead(repo)).toBe(moved);
    const r = await worktrees.rebase('Cmove', base, moved);
    expect(r.outcome).toBe('rebased');
    if (r.outcome !== 'rebased') throw new Error('unreachable');
    expect(git(w.path, 'rev-parse', 'HEAD~1')).toBe(moved);
    expect(await readFile(join(w.path, 'feature.txt'), 'utf8')).toBe('feature\n');

    const c = await worktrees.prepare(repo, 'Cconflict', moved);
    await writeFile(join(c.path, 'app.txt'), 'mine\n');
    const before = await worktrees.commitAll('Cconflict', 'mine');
    const theirs = remote.commit({ 'app.txt': 'theirs\n' }, 'upstream edits the same line');
    await worktrees.sync(repo);
    expect(await worktrees.rebase('Cconflict', moved, theirs)).toEqual({ outcome: 'conflict' });
    expect(await worktrees.head('Cconflict')).toBe(before);
    expect(git(c.path, 'status', '--porcelain')).toBe('');
  });

  it('removes a finished case’s worktree and keeps its branch', async () => {
    const w = await worktrees.prepare(repo, 'Cdone', base);
    await worktrees.remove(repo, 'Cdone');
    expect(existsSync(w.path)).toBe(false);
    const mirror = worktrees.mirrorPath(repo);
    expect(git(mirror, 'worktree', 'list')).not.toContain('Cdone');
    expect(git(mirror, 'rev-parse', 'refs/heads/caseloop/Cdone')).toBe(base);
    await worktrees.remove(repo, 'Cdone');
  });

  it('pushes the same revision twice and creates nothing new the second time', async () => {
    const publisher = new BranchPublisher(gitAdapter, worktrees);
    const revision = await worktrees.head('Cbeta');
    const first = await publisher.push(repo, 'Cbeta', revision);
    expect(first).toEqual({ branch: 'caseloop/Cbeta', revision, created: true });
    const refsAfterFirst = remote.refCount();
    const second = await publisher.push(repo, 'Cbeta', revision);
    expect(second.created).toBe(false);
    expect(remote.ref('refs/heads/caseloop/Cbeta')).toBe(revision);
    expect(remote.refCount()).toBe(refsAfterFirst);
  });

  it.each(['..', '../etc', 'a/b', 'a b', 'a;rm -rf', '$(id)', '-rf', ''])(
    'refuses the unsafe case id %j before touching the disk',
    async (id) => {
      expect(() => worktrees.worktreePath(id)).toThrow(expect.objectContaining({ code: 'unsafe_id' }));
      await expect(worktrees.prepare(repo, id, base)).rejects.toMatchObject({ code: 'unsafe_id' });
    },
  );

  it('reports a repository that is gone as a GitError', async () => {
    const gone: TargetRepository = { ...repo, id: 'gone', url: join(root, 'no-such-repo.git') };
    await expect(worktrees.sync(gone)).rejects.toBeInstanceOf(GitError);
  });

  it('answers git credential prompts from the credentials file only', async () => {
    const creds = join(root, 'creds');
    await writeFile(creds, 'bot:s3cr3t-token\n', { mode: 0o600 });
    const askpass = join(root, 'askpass', 'git-askpass.sh');
    const { execFileSync } = await import('node:child_process');
    const ask = (prompt: string, file?: string) =>
      execFileSync(askpass, [prompt], {
        env: file ? { CASELOOP_GIT_CREDENTIALS_FILE: file } : {},
        encoding: 'utf8',
      }).trim();
    expect(ask("Username for 'https://git.example.com': ", creds)).toBe('bot');
    expect(ask("Password for 'https://bot@git.example.com': ", creds)).toBe('s3cr3t-token');
    await writeFile(creds, 'just-a-token\n');
    expect(ask("Username for 'https://git.example.com': ", creds)).toBe('x-access-token');
    expect(() => ask('Password: ')).toThrow();
  });
});

/**
 * A worker killed while git holds a lock (or a git killed at its timeout) leaves `index.lock` and
 * friends behind; git never removes them, so every later command on that worktree failed with
 * "Unable to create '…/index.lock': File exists" until the task was dead-lettered. Seen in the crash
 * test with the worker killed at "task assigned".
 */
describe('lock files a dead git left behind', () => {
  let root: string;
  let remote: TestRemote;
  let repo: TargetRepository;
  let base: string;
  const removed: string[] = [];
  const dirs = () => ({ mirrors: join(root, 'mirrors'), worktrees: join(root, 'worktrees') });
  const adapter = async (staleLocks: boolean) =>
    new Git({
      askpassPath: await installAskpass(join(root, 'askpass')),
      inheritedEnv: process.env,
      ...(staleLocks
        ? {
            staleLocks: {
              roots: [dirs().mirrors, dirs().worktrees],
              staleMs: 5_000,
              onRemoved: (lock: string) => removed.push(lock),
            },
          }
        : {}),
    });
  const plant = async (path: string, ageMs: number) => {
    await writeFile(path, '');
    const at = new Date(Date.now() - ageMs);
    await utimes(path, at, at);
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'caseloop-gitlocks-'));
    remote = new TestRemote(join(root, 'remote'));
    base = remote.commit({ 'app.txt': 'one\n' }, 'initial');
    repo = {
      id: 'webapp',
      url: remote.origin,
      targetBranch: 'main',
      checks: [{ name: 'true', kind: 'other', command: ['true'], timeoutMs: 5_000 }],
    };
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('removes stale locks in its own worktree and goes on; a fresh lock is a wait, never a blocker', async () => {
    const worktrees = new WorktreeManager(await adapter(true), dirs());
    await worktrees.sync(repo);
    const w = await worktrees.prepare(repo, 'Clocked', base);
    await writeFile(join(w.path, 'app.txt'), 'changed\n');
    const gitDir = git(w.path, 'rev-parse', '--absolute-git-dir');
    await plant(join(gitDir, 'index.lock'), 3_600_000);
    await plant(join(gitDir, 'HEAD.lock'), 3_600_000);

    await worktrees.resetTo('Clocked', base);
    expect(await readFile(join(w.path, 'app.txt'), 'utf8')).toBe('one\n');
    expect(existsSync(join(gitDir, 'index.lock'))).toBe(false);
    expect(removed.map((p) => p.split('/').pop()).sort()).toEqual(['HEAD.lock', 'index.lock']);

    // a lock just taken is a live git's: left alone, the step fails as git_locked (retried later)
    await plant(join(gitDir, 'index.lock'), 0);
    const held = await worktrees.resetTo('Clocked', base).catch((e: unknown) => e);
    expect(held).toBeInstanceOf(GitError);
    expect((held as GitError).code).toBe('git_locked');
    expect(existsSync(join(gitDir, 'index.lock'))).toBe(true);
    // even where a failure is an answer (a rebase's conflict), a held lock is not mistaken for one
    await expect(worktrees.rebase('Clocked', base, base)).rejects.toMatchObject({ code: 'git_locked' });
    // once it has aged past the threshold with nobody touching it, it is a dead git's
    await plant(join(gitDir, 'index.lock'), 10_000);
    await expect(worktrees.commitAll('Clocked', 'nothing')).resolves.toBeNull();
  });

  it('a branch lock of the case in the mirror is cleared the same way', async () => {
    const worktrees = new WorktreeManager(await adapter(true), dirs());
    const w = await worktrees.prepare(repo, 'Cbranch', base);
    await writeFile(join(w.path, 'new.txt'), 'x\n');
    const refLock = join(worktrees.mirrorPath(repo), 'refs', 'heads', 'caseloop', 'Cbranch.lock');
    await mkdir(join(refLock, '..'), { recursive: true });
    await plant(refLock, 3_600_000);
    const rev = await worktrees.commitAll('Cbranch', 'attempt 1');
    expect(rev).toMatch(/^[0-9a-f]{40}$/);
    expect(existsSync(refLock)).toBe(false);
  });

  it('a commit a killed fetch left without its tree is not taken as present; fetching it again completes it', async () => {
    const worktrees = new WorktreeManager(await adapter(true), dirs());
    await worktrees.sync(repo);
    // a commit on the remote the mirror has not fetched (not on the target branch)
    git(remote.dev, 'checkout', '--quiet', '-b', 'side');
    await writeFile(join(remote.dev, 'side.txt'), 'side\n');
    git(remote.dev, 'add', '--all');
    git(remote.dev, 'commit', '--quiet', '-m', 'side');
    git(remote.dev, 'push', '--quiet', 'origin', 'side');
    const side = git(remote.dev, 'rev-parse', 'HEAD');
    git(remote.dev, 'checkout', '--quiet', 'main');
    // what an interrupted unpack leaves: the commit object alone
    const raw = execFileSync('git', ['cat-file', 'commit', side], { cwd: remote.dev });
    execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
      cwd: worktrees.mirrorPath(repo),
      input: raw,
    });
    expect(await worktrees.hasCommit(repo, side)).toBe(false);
    expect(await worktrees.fetchRevision(repo, side)).toBe(side);
    expect(await worktrees.hasCommit(repo, side)).toBe(true);
    const w = await worktrees.prepare(repo, 'Cside', side);
    expect(await readFile(join(w.path, 'side.txt'), 'utf8')).toBe('side\n');
  });

  it('without the policy (as before) the stale lock fails every command; outside its roots it is never touched', async () => {
    const plain = new WorktreeManager(await adapter(false), dirs());
    const w = await plain.prepare(repo, 'Cplain', base);
    const gitDir = git(w.path, 'rev-parse', '--absolute-git-dir');
    await plant(join(gitDir, 'index.lock'), 3_600_000);
    await expect(plain.resetTo('Cplain', base)).rejects.toMatchObject({ code: 'git_failed' });
    await expect(plain.resetTo('Cplain', base)).rejects.toThrow(/index\.lock': File exists/);
    await rm(join(gitDir, 'index.lock'));

    // a repository elsewhere (not the worker's) keeps its lock whatever its age
    const elsewhere = join(root, 'elsewhere');
    await mkdir(elsewhere);
    git(elsewhere, 'init', '--quiet');
    git(elsewhere, 'commit', '--quiet', '--allow-empty', '-m', 'first');
    await plant(join(elsewhere, '.git', 'index.lock'), 3_600_000);
    const withPolicy = await adapter(true);
    await expect(withPolicy.run(['reset', '--hard'], { cwd: elsewhere })).rejects.toMatchObject({
      code: 'git_failed',
    });
    expect(existsSync(join(elsewhere, '.git', 'index.lock'))).toBe(true);
  });
});
