import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TargetRepository } from '@caseloop/target-repositories';
import { RepositorySetupSteps } from './app-setup';
import { GitCaseCode } from './case-code.source';

jest.setTimeout(60_000);

const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@localhost',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@localhost',
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: tmpdir(),
};
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();

describe('the code the evidence service proves comes from the remote, not from the worker', () => {
  let root: string;
  let remote: string;
  let work: string;
  let code: GitCaseCode;
  let repo: TargetRepository;
  let base: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'caseloop-evidence-code-'));
    remote = join(root, 'remote.git');
    work = join(root, 'work');
    git(root, 'init', '-q', '--bare', remote);
    await mkdir(work);
    git(work, 'init', '-q', '-b', 'main');
    await writeFile(join(work, 'app.txt'), 'broken\n');
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'base');
    base = git(work, 'rev-parse', 'HEAD');
    git(work, 'push', '-q', remote, 'main');
    code = new GitCaseCode({ dir: join(root, 'evidence'), timeoutMs: 30_000 });
    repo = {
      id: 'shop',
      url: remote,
      targetBranch: 'main',
      checks: [{ name: 'c', kind: 'focused_test', command: ['true'], timeoutMs: 1000 }],
    };
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  const commitOnCaseBranch = async (caseId: string, text: string, push: boolean): Promise<string> => {
    git(work, 'checkout', '-q', '-B', `caseloop/${caseId}`, base);
    await writeFile(join(work, 'app.txt'), text);
    git(work, 'commit', '-q', '-am', text.trim());
    const revision = git(work, 'rev-parse', 'HEAD');
    if (push) git(work, 'push', '-q', '--force', remote, `caseloop/${caseId}`);
    return revision;
  };

  it('clears a ref lock a killed fetch left in its mirror, and waits on a fresh one', async () => {
    const revision = await commitOnCaseBranch('Clock1', 'locked\n', true);
    const refLock = join(root, 'evidence', 'mirrors', 'shop.git', 'refs', 'caseloop', 'Clock1.lock');
    await code.fetch(repo, 'Cwarm', base).catch(() => undefined); // the mirror exists
    await mkdir(join(refLock, '..'), { recursive: true });
    await writeFile(refLock, '');
    // just taken: a live git's, left alone; the fetch fails and is retried by the caller
    await expect(code.fetch(repo, 'Clock1', revision)).rejects.toThrow(/lock': File exists/);
    expect(existsSync(refLock)).toBe(true);
    // untouched for longer than the threshold: a dead git's
    const old = new Date(Date.now() - 3_600_000);
    await utimes(refLock, old, old);
    // (the failed fetch may have brought the objects already: a newer revision needs the ref)
    const next = await commitOnCaseBranch('Clock1', 'locked, then fixed\n', true);
    expect(await code.fetch(repo, 'Clock1', next)).toBe('present');
    expect(existsSync(refLock)).toBe(false);
  });

  it('a commit a killed fetch left without its tree is fetched again, not taken as present', async () => {
    const revision = await commitOnCaseBranch('Cpartial', 'partial\n', true);
    const mirror = join(root, 'evidence', 'mirrors', 'shop.git');
    await code.fetch(repo, 'Cwarm', base).catch(() => undefined); // the mirror exists
    // what an interrupted unpack leaves: the commit object, loose, and nothing it points to
    const raw = execFileSync('git', ['cat-file', 'commit', revision], { cwd: work, env: GIT_ENV });
    const written = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
      cwd: mirror,
      env: GIT_ENV,
      input: raw,
      encoding: 'utf8',
    }).trim();
    expect(written).toBe(revision);
    expect(spawnSync('git', ['cat-file', '-e', `${revision}^{tree}`], { cwd: mirror }).status).not.toBe(0);

    expect(await code.fetch(repo, 'Cpartial', revision)).toBe('present');
    const checkout = await code.checkout(repo, 'Cpartial', revision);
    if (checkout.status !== 'ready') throw new Error(checkout.reason);
    expect(await readFile(join(checkout.path, 'app.txt'), 'utf8')).toBe('partial\n');
    await checkout.release();
  });

  it('finds a revision only once it is pushed, then checks it out clean and diffs it against its base', async () => {
    const revision = await commitOnCaseBranch('Ccode1', 'fixed\n', false);
    expect(await code.fetch(repo, 'Ccode1', revision)).toBe('absent');
    git(work, 'push', '-q', '--force', remote, 'caseloop/Ccode1');
    expect(await code.fetch(repo, 'Ccode1', revision)).toBe('present');

    const checkout = await code.checkout(repo, 'Ccode1', revision);
    if (checkout.status !== 'ready') throw new Error(checkout.reason);
    expect(checkout.path.startsWith(join(root, 'evidence'))).toBe(true);
    expect(await readFile(join(checkout.path, 'app.txt'), 'utf8')).toBe('fixed\n');
    expect(git(checkout.path, 'rev-parse', 'HEAD')).toBe(revision);
    expect(git(checkout.path, 'status', '--porcelain')).toBe('');
    await checkout.release();
    expect(existsSync(checkout.path)).toBe(false);

    const diff = await code.diff(repo, base, revision);
    expect(diff).toContain('-broken');
    expect(diff).toContain('+fixed');
  });

  it("keeps two processes sharing the directory out of each other's checkout of the same revision", async () => {
    // Two replicas may both prove one revision (its ChecksCompleted on one, its BranchPushed on the
    // other): neither may remove or replace the tree the other's client is running from.
    const revision = await commitOnCaseBranch('Ccode4', 'shared\n', true);
    const other = new GitCaseCode({ dir: join(root, 'evidence'), timeoutMs: 30_000 });
    const first = await code.checkout(repo, 'Ccode4', revision);
    if (first.status !== 'ready') throw new Error(first.reason);
    await writeFile(join(first.path, 'running.txt'), 'the client of the first\n');

    const second = await other.checkout(repo, 'Ccode4', revision);
    if (second.status !== 'ready') throw new Error(second.reason);
    expect(second.path).not.toBe(first.path);
    expect(await readFile(join(second.path, 'app.txt'), 'utf8')).toBe('shared\n');
    expect(await readFile(join(first.path, 'running.txt'), 'utf8')).toBe('the client of the first\n');

    await second.release();
    expect(existsSync(second.path)).toBe(false);
    expect(await readFile(join(first.path, 'app.txt'), 'utf8')).toBe('shared\n');
    expect(git(first.path, 'rev-parse', 'HEAD')).toBe(revision);
    await first.release();
    expect(existsSync(first.path)).toBe(false);
  });

  it("removes the checkouts a gone process of this host left, and keeps a live one's", async () => {
    const host = hostname().replace(/[^A-Za-z0-9.-]/g, '_');
    const gone = spawnSync('true').pid as number;
    const checkouts = join(root, 'evidence', 'checkouts');
    const dead = join(checkouts, `${host}-${gone}-0`, 'Cold-0123456789ab');
    const live = join(checkouts, `${host}-${process.ppid}-0`, 'Clive-0123456789ab');
    const foreign = join(checkouts, `elsewhere-${gone}-0`, 'Cfar-0123456789ab');
    for (const d of [dead, live, foreign]) await mkdir(d, { recursive: true });

    const revision = await commitOnCaseBranch('Ccode5', 'swept\n', true);
    const fresh = new GitCaseCode({ dir: join(root, 'evidence'), timeoutMs: 30_000 });
    const checkout = await fresh.checkout(repo, 'Ccode5', revision);
    if (checkout.status !== 'ready') throw new Error(checkout.reason);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(foreign)).toBe(true);
    await checkout.release();
  });

  it('refuses a revision that is not on the case branch', async () => {
    await commitOnCaseBranch('Ccode2', 'pushed\n', true);
    const other = await commitOnCaseBranch('Ccode2x', 'never pushed\n', false);
    const checkout = await code.checkout(repo, 'Ccode2', other);
    expect(checkout).toEqual({
      status: 'unusable',
      reason: `revision ${other.slice(0, 12)} is not on the case branch of the remote`,
    });
  });

  it("runs the repository's setup steps in the checkout, and says which one failed and how", async () => {
    const revision = await commitOnCaseBranch('Ccode3', 'needs setup\n', true);
    const checkout = await code.checkout(repo, 'Ccode3', revision);
    if (checkout.status !== 'ready') throw new Error(checkout.reason);
    const setup = new RepositorySetupSteps();
    const withSetup = (steps: unknown[]) => ({ ...repo, setup: steps }) as TargetRepository;
    expect(
      await setup.prepare(
        withSetup([
          {
            name: 'install',
            command: ['sh', '-c', 'mkdir -p node_modules && echo "$GREETING" > node_modules/.installed'],
            timeoutMs: 10_000,
            env: { GREETING: 'installed' },
          },
        ]),
        checkout.path,
      ),
    ).toBeNull();
    expect(await readFile(join(checkout.path, 'node_modules', '.installed'), 'utf8')).toBe('installed\n');
    expect(
      await setup.prepare(
        withSetup([
          {
            name: 'install',
            command: ['sh', '-c', 'echo "npm ERR! 404 left-pad" >&2; exit 1'],
            timeoutMs: 10_000,
          },
          { name: 'never', command: ['sh', '-c', 'touch never'], timeoutMs: 10_000 },
        ]),
        checkout.path,
      ),
    ).toBe('setup step install failed: exit 1: npm ERR! 404 left-pad');
    expect(existsSync(join(checkout.path, 'never'))).toBe(false);
    expect(
      await setup.prepare(
        withSetup([{ name: 'slow', command: ['sh', '-c', 'sleep 30'], timeoutMs: 300 }]),
        checkout.path,
      ),
    ).toBe('setup step slow failed: it did not finish within 300 ms');
    await checkout.release();
  });

  it("gives the steps what the worker's get: repository env, secret files (redacted), the shared cache, the host's CA settings, nothing of the service's", async () => {
    const revision = await commitOnCaseBranch('Ccode4', 'needs an install\n', true);
    const checkout = await code.checkout(repo, 'Ccode4', revision);
    if (checkout.status !== 'ready') throw new Error(checkout.reason);
    const tokenFile = join(root, 'npm-token');
    await writeFile(tokenFile, 'tok-s3cr3t-value\n');
    const cache = join(root, 'evidence-cache');
    const setup = new RepositorySetupSteps({
      runsDir: join(root, 'evidence-runs'),
      cacheDir: cache,
      hostEnv: {
        PATH: process.env.PATH,
        NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt',
        EVIDENCE_S3_SECRET_ACCESS_KEY: 'do-not-leak',
      },
    });
    const dump = [
      'sh',
      '-c',
      'mkdir -p node_modules && env | grep -E "^(REGION|MODE|NPM_TOKEN|NODE_EXTRA_CA_CERTS|npm_config_cache|EVIDENCE_S3_SECRET_ACCESS_KEY|HOME)=" | sort > node_modules/.env',
    ];
    const withSetup = (steps: unknown[], secretFiles?: Record<string, string>) =>
      ({
        ...repo,
        env: { REGION: 'eu', MODE: 'repo' },
        setup: steps,
        ...(secretFiles ? { secretFiles } : {}),
      }) as TargetRepository;
    expect(
      await setup.prepare(
        withSetup([{ name: 'install', command: dump, timeoutMs: 10_000, env: { MODE: 'step' } }], {
          NPM_TOKEN: tokenFile,
        }),
        checkout.path,
      ),
    ).toBeNull();
    const seen = (await readFile(join(checkout.path, 'node_modules', '.env'), 'utf8')).trim().split('\n');
    expect(seen).toEqual(
      expect.arrayContaining([
        'MODE=step',
        'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
        'NPM_TOKEN=tok-s3cr3t-value',
        'REGION=eu',
        `npm_config_cache=${join(cache, 'npm')}`,
      ]),
    );
    expect(seen.join('\n')).not.toContain('EVIDENCE_S3_SECRET_ACCESS_KEY');
    // A throwaway HOME under the runs directory, gone after the step.
    const home = seen.find((l) => l.startsWith('HOME='))?.slice(5) ?? '';
    expect(home.startsWith(join(root, 'evidence-runs'))).toBe(true);
    expect(existsSync(home)).toBe(false);

    // A failing step's reason never carries the secret's value.
    const leaky = await setup.prepare(
      withSetup(
        [
          {
            name: 'install',
            command: ['sh', '-c', 'echo "auth $NPM_TOKEN refused" >&2; exit 1'],
            timeoutMs: 10_000,
          },
        ],
        {
          NPM_TOKEN: tokenFile,
        },
      ),
      checkout.path,
    );
    expect(leaky).toBe('setup step install failed: exit 1: auth [redacted:known_secret] refused');
    // An unreadable secret file: nothing runs, and the reason names the variable only.
    expect(
      await setup.prepare(
        withSetup([{ name: 'install', command: ['sh', '-c', 'touch ran'], timeoutMs: 10_000 }], {
          NPM_TOKEN: join(root, 'missing-token'),
        }),
        checkout.path,
      ),
    ).toBe('setup cannot run: the secret file for NPM_TOKEN cannot be read (ENOENT)');
    expect(existsSync(join(checkout.path, 'ran'))).toBe(false);
    await checkout.release();
  });
});
