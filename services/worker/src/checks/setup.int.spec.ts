import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { checkOutputArtifactPath } from '@caseloop/contracts';
import { TargetRepository } from '@caseloop/target-repositories';
import { ChecksRunner, StepEvent } from './checks.runner';
import { DirectoryCheckLogStore } from './directory-check-log.store';
import { createRedactor } from './output.redactor';

jest.setTimeout(60_000);

const exec = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', ...args], { cwd }).then((r) =>
    r.stdout.trim(),
  );

/** Setup steps, per-check environment and directories, the shared cache and file secrets, on a real git worktree. */
describe('setup and check environment', () => {
  let root: string;
  let worktree: string;
  let runner: ChecksRunner;
  const events: StepEvent[] = [];
  const rev = (c: string) => c.repeat(40);

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'caseloop-setup-'));
    worktree = join(root, 'wt');
    await mkdir(join(worktree, 'packages', 'web'), { recursive: true });
    await writeFile(join(worktree, 'package.json'), '{"name":"x"}\n');
    await writeFile(join(worktree, '.gitignore'), 'installed/\n');
    await git(worktree, 'init', '--quiet', '--initial-branch=main');
    await git(worktree, 'add', '--all');
    await git(worktree, 'commit', '--quiet', '-m', 'init');
    await writeFile(join(root, 'npm-token'), 'npm_s3cr3t-value-42\nignored second line\n', { mode: 0o600 });
    await chmod(join(root, 'npm-token'), 0o600);
    runner = new ChecksRunner({
      logs: new DirectoryCheckLogStore(join(root, 'artifacts')),
      runsDir: join(root, 'runs'),
      cacheDir: join(root, 'cache'),
      inheritedEnv: process.env,
      redact: createRedactor([]),
      killGraceMs: 500,
      onStep: (e) => events.push(e),
    });
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  const installs = async () =>
    (await readFile(join(worktree, 'installed', 'log'), 'utf8').catch(() => '')).split('\n').filter(Boolean)
      .length;
  const repo = (over: Partial<TargetRepository> = {}): TargetRepository => ({
    id: 'r',
    url: '/r',
    targetBranch: 'main',
    setup: [
      {
        name: 'install',
        // Stands in for `npm ci`: what it installs is ignored by git, like node_modules.
        command: ['sh', '-c', 'mkdir -p installed && echo run >> installed/log'],
        timeoutMs: 10_000,
        inputs: ['package.json'],
      },
    ],
    checks: [
      {
        name: 'uses-install',
        kind: 'focused_test',
        command: ['sh', '-c', 'test -f installed/log'],
        timeoutMs: 10_000,
      },
    ],
    ...over,
  });

  it('runs setup once per worktree and inputs: a new revision with the same inputs keeps the install', async () => {
    const first = await runner.runAll(repo(), 'Csetup', worktree, rev('a'));
    expect(first.map((r) => [r.result.name, r.result.outcome])).toEqual([
      ['setup:install', 'passed'],
      ['uses-install', 'passed'],
    ]);
    const again = await runner.runAll(repo(), 'Csetup', worktree, rev('b'));
    expect(again.map((r) => r.result.name)).toEqual(['uses-install']);
    expect(await installs()).toBe(1);
    expect(events).toContainEqual({ phase: 'cached', kind: 'setup', name: 'install' });

    // The record is not in the tree: no change an attempt could commit, nothing a repository's
    // `prettier --check .` or `eslint .` would find; only what the step installed is there.
    expect(await git(worktree, 'status', '--porcelain')).toBe('');
    expect(await git(worktree, 'status', '--porcelain', '--ignored')).toBe('!! installed/');

    await writeFile(join(worktree, 'package.json'), '{"name":"x","dependencies":{"y":"1"}}\n');
    await runner.runAll(repo(), 'Csetup', worktree, rev('c'));
    expect(await installs()).toBe(2);
    await git(worktree, 'checkout', '--quiet', '--', 'package.json');

    // A pristine reset (git clean -x) takes the install: the record no longer holds, setup runs again.
    await git(worktree, 'clean', '-ffdxq');
    const rerun = await runner.runAll(repo(), 'Csetup', worktree, rev('d'));
    expect(rerun.map((r) => r.result.outcome)).toEqual(['passed', 'passed']);
    expect(await installs()).toBe(1);
  });

  it('without inputs, setup runs once per revision', async () => {
    const perRevision = repo({
      setup: [{ name: 'gen', command: ['sh', '-c', 'echo gen >> installed/gen'], timeoutMs: 10_000 }],
    });
    await mkdir(join(worktree, 'installed'), { recursive: true });
    await runner.runAll(perRevision, 'Csetup', worktree, rev('e'));
    await runner.runAll(perRevision, 'Csetup', worktree, rev('e'));
    await runner.runAll(perRevision, 'Csetup', worktree, rev('f'));
    expect((await readFile(join(worktree, 'installed', 'gen'), 'utf8')).trim().split('\n')).toHaveLength(2);
  });

  it('a failed setup step is a failed result, skips every check and runs again next time', async () => {
    const failing = repo({
      setup: [{ name: 'broken', command: ['sh', '-c', 'echo cannot install; exit 7'], timeoutMs: 10_000 }],
    });
    const runs = await runner.runAll(failing, 'Csetup', worktree, rev('1'));
    expect(runs.map((r) => [r.result.name, r.result.outcome, r.result.exitCode])).toEqual([
      ['setup:broken', 'failed', 7],
      ['uses-install', 'skipped', null],
    ]);
    const out = await readFile(
      join(root, 'artifacts', checkOutputArtifactPath('Csetup', rev('1'), runs[0]!.result.outputSha256!)),
      'utf8',
    );
    expect(out).toContain('cannot install');
    const second = await runner.runAll(failing, 'Csetup', worktree, rev('1'));
    expect(second[0]?.result.name).toBe('setup:broken');
  });

  it('gives each check its directory, its non-secret variables, the shared cache and the file secrets, which never reach the output', async () => {
    const script = [
      'echo "pwd=$(pwd)"',
      'echo "mode=$MODE level=$LEVEL"',
      'echo "cache=$npm_config_cache corepack=$COREPACK_HOME prompt=$COREPACK_ENABLE_DOWNLOAD_PROMPT"',
      'echo "token=$NPM_TOKEN"',
      'test "$NPM_TOKEN" = npm_s3cr3t-value-42',
    ].join('\n');
    await mkdir(join(worktree, 'packages', 'web'), { recursive: true });
    const [run] = await runner.runAll(
      repo({
        setup: [],
        env: { MODE: 'repo', LEVEL: 'repo' },
        secretFiles: { NPM_TOKEN: join(root, 'npm-token') },
        checks: [
          {
            name: 'env',
            kind: 'other',
            command: ['sh', '-c', script],
            timeoutMs: 10_000,
            cwd: 'packages/web',
            env: { LEVEL: 'check' },
          },
        ],
      }),
      'Cenv',
      worktree,
      rev('2'),
    );
    expect(run?.result.outcome).toBe('passed');
    const out = await readFile(
      join(root, 'artifacts', checkOutputArtifactPath('Cenv', rev('2'), run!.result.outputSha256!)),
      'utf8',
    );
    expect(out).toContain(`pwd=${join(worktree, 'packages', 'web')}`);
    expect(out).toContain('mode=repo level=check');
    expect(out).toContain(
      `cache=${join(root, 'cache', 'npm')} corepack=${join(root, 'cache', 'corepack')} prompt=0`,
    );
    expect(out).toContain('token=[redacted:known_secret]');
    expect(out).not.toContain('npm_s3cr3t-value-42');
    const ended = events.filter((e) => e.phase === 'end' && e.name === 'env');
    expect(JSON.stringify(ended)).not.toContain('npm_s3cr3t-value-42');
  });

  it('a working directory missing at the revision is an error that names it', async () => {
    const [run] = await runner.runAll(
      repo({
        setup: [],
        checks: [{ name: 'nowhere', kind: 'other', command: ['true'], timeoutMs: 5_000, cwd: 'no/such' }],
      }),
      'Cnocwd',
      worktree,
      rev('4'),
    );
    expect(run?.result.outcome).toBe('error');
    const ended = events.find((e) => e.phase === 'end' && e.name === 'nowhere');
    expect(ended && 'output' in ended ? ended.output : '').toContain('no/such does not exist');
  });

  it('a secret file that cannot be read runs nothing and says which variable, never a value', async () => {
    const runs = await runner.runAll(
      repo({ secretFiles: { NPM_TOKEN: join(root, 'missing-token') } }),
      'Cnosecret',
      worktree,
      rev('3'),
    );
    expect(runs.map((r) => [r.result.name, r.result.outcome])).toEqual([['uses-install', 'error']]);
    expect(runs[0]?.blocker?.kind).toBe('permissions');
  });
});
