import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { run } from './caseloop';
import { hintFor } from './repo-check';

jest.setTimeout(60_000);

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: tmpdir(),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@localhost',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@localhost',
    },
    encoding: 'utf8',
  }).trim();

/** `caseloop repo check` through the binary's own command table, on a real git repository (no client). */
describe('caseloop repo check', () => {
  let dir: string;
  let repositories: string;
  let fixed: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'caseloop-repo-check-spec-'));
    const app = join(dir, 'app');
    await mkdir(app);
    git(app, 'init', '-q', '-b', 'main');
    await writeFile(join(app, 'ok.txt'), 'fine\n');
    git(app, 'add', '-A');
    git(app, 'commit', '-q', '-m', 'app');
    // A fix on another branch: --revision reaches it by name or by commit.
    git(app, 'checkout', '-q', '-b', 'fixed');
    await writeFile(join(app, 'fixed.txt'), 'fixed\n');
    git(app, 'add', '-A');
    git(app, 'commit', '-q', '-m', 'fix');
    fixed = git(app, 'rev-parse', 'HEAD');
    git(app, 'checkout', '-q', 'main');
    repositories = join(dir, 'repositories.yaml');
    const entry = (id: string, failing: boolean) => ({
      id,
      url: app,
      targetBranch: 'main',
      env: { GREETING: 'hello' },
      setup: [
        {
          name: 'install',
          command: ['sh', '-c', 'mkdir -p node_modules && echo "$GREETING" > node_modules/.done'],
          timeoutMs: 10_000,
        },
      ],
      checks: [
        {
          name: 'greeting',
          kind: 'regression_test',
          command: ['sh', '-c', 'grep -q hello node_modules/.done'],
          timeoutMs: 10_000,
        },
        {
          name: 'focused',
          kind: 'focused_test',
          command: [
            'sh',
            '-c',
            failing
              ? 'test -f fixed.txt || { echo "expected 23.00, got 23.75" >&2; exit 3; }'
              : 'test -f ok.txt',
          ],
          timeoutMs: 10_000,
        },
      ],
    });
    // Its install fails: the client, which would run from the unprepared tree, is not started.
    const unprepared = {
      ...entry('unprepared', false),
      setup: [
        {
          name: 'install',
          command: ['sh', '-c', 'echo "registry unreachable" >&2; exit 1'],
          timeoutMs: 10_000,
        },
      ],
      client: {
        start: ['sh', '-c', 'exit 1'],
        url: 'http://127.0.0.1:4300',
        flow: 'flows/app.yaml',
        fixtureData: true,
      },
    };
    // An install that prints its progress first and fails at the end, in a package's postinstall
    // that downloads a test browser from its own host.
    const noisy = {
      ...entry('noisy', false),
      setup: [
        {
          name: 'install',
          command: [
            'sh',
            '-c',
            [
              'for i in $(seq 1 40); do echo "Progress: resolved $i, downloaded $i"; done',
              'echo ".../node_modules/cypress postinstall: The Cypress App could not be downloaded."',
              'echo ".../node_modules/cypress postinstall: Error: getaddrinfo ENOTFOUND download.cypress.io"',
              'echo " ELIFECYCLE  Command failed with exit code 1." >&2',
              'exit 1',
            ].join('; '),
          ],
          timeoutMs: 10_000,
        },
      ],
    };
    // Prepared, but its client stops at once, saying why on stderr.
    const crashing = {
      ...entry('crashing', false),
      client: {
        start: ['sh', '-c', 'echo "No module named flask" >&2; exit 1'],
        url: 'http://127.0.0.1:4300',
        flow: 'flows/app.yaml',
        fixtureData: true,
      },
    };
    await mkdir(join(dir, 'flows'));
    await writeFile(join(dir, 'flows', 'app.yaml'), stringify({ steps: [{ goto: '/' }] }));
    await writeFile(
      repositories,
      stringify({ repositories: [entry('good', false), entry('bad', true), unprepared, noisy, crashing] }),
    );
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const check = async (id: string, ...more: string[]) => {
    const out: string[] = [];
    const code = await run(
      [
        'repo',
        'check',
        id,
        '--repositories',
        repositories,
        '--no-client',
        '--cache-dir',
        join(dir, 'cache'),
        ...more,
      ],
      { out: (l) => out.push(l), err: (l) => out.push(l), isTTY: false },
      { PATH: process.env.PATH },
    );
    return { code, out: out.join('\n') };
  };

  it('passes every step of a good repository and exits 0', async () => {
    const r = await check('good');
    expect(r.out).toMatch(/ok {3}clone main @ [0-9a-f]{12}/);
    expect(r.out).toMatch(/ok {3}setup install/);
    expect(r.out).toMatch(/ok {3}check greeting \(regression_test\)/);
    expect(r.out).toMatch(/ok {3}check focused \(focused_test\)/);
    expect(r.out).toContain('client: not run (--no-client)');
    expect(r.out).toMatch(/repo check good: all 4 steps passed at [0-9a-f]{12}/);
    expect(r.code).toBe(0);
  });

  it('names the failing check with its first lines and exits 1', async () => {
    const r = await check('bad');
    expect(r.out).toMatch(/FAIL check focused \(focused_test\) +[0-9.]+ s {2}failed \(exit 3\)/);
    expect(r.out).toContain('| expected 23.00, got 23.75');
    expect(r.out).toMatch(/repo check bad: 1 of 4 steps failed/);
    expect(r.code).toBe(1);
  });

  it('checks a revision off the target branch, by branch name or commit, and refuses one the remote lacks', async () => {
    const byName = await check('bad', '--revision', 'fixed');
    expect(byName.out).toContain(`ok   clone fixed @ ${fixed.slice(0, 12)}`);
    expect(byName.out).toContain(`repo check bad: all 4 steps passed at ${fixed.slice(0, 12)}`);
    expect(byName.code).toBe(0);
    const byCommit = await check('bad', '--revision', fixed);
    expect(byCommit.out).toContain(`all 4 steps passed at ${fixed.slice(0, 12)}`);
    expect(byCommit.code).toBe(0);
    const missing = await check('bad', '--revision', 'no-such-branch');
    expect(missing.out).toContain('revision no-such-branch is not in the repository');
    expect(missing.code).toBe(1);
  });

  it('does not start the client when setup failed, and says that is why', async () => {
    const out: string[] = [];
    const code = await run(
      ['repo', 'check', 'unprepared', '--repositories', repositories, '--cache-dir', join(dir, 'cache')],
      { out: (l) => out.push(l), err: (l) => out.push(l), isTTY: false },
      { PATH: process.env.PATH },
    );
    const text = out.join('\n');
    expect(text).toMatch(/FAIL setup install +[0-9.]+ s {2}failed \(exit 1\)/);
    expect(text).toMatch(
      /FAIL client sh -c exit 1 \+ flow flows\/app\.yaml +0\.0 s {2}skipped: setup:install failed/,
    );
    expect(text).not.toContain('could not be started');
    expect(text).toMatch(/repo check unprepared: 4 of 5 steps failed/);
    expect(code).toBe(1);
  });

  it("shows a client's own output when it exits before answering", async () => {
    const out: string[] = [];
    const code = await run(
      ['repo', 'check', 'crashing', '--repositories', repositories, '--cache-dir', join(dir, 'cache')],
      { out: (l) => out.push(l), err: (l) => out.push(l), isTTY: false },
      { PATH: process.env.PATH },
    );
    const text = out.join('\n');
    expect(text).toMatch(
      /FAIL client .* blocked: the app could not be started: the client exited before answering \(code 1\)/,
    );
    expect(text).toContain("the client's output (shown here only, never stored):");
    expect(text).toContain('| No module named flask');
    expect(code).toBe(1);
  });

  it('shows where a long failure ended, not only how it began, and how to skip a blocked binary download', async () => {
    const r = await check('noisy');
    expect(r.out).toMatch(/FAIL setup install +[0-9.]+ s {2}failed \(exit 1\)/);
    expect(r.out).toContain('| Progress: resolved 1, downloaded 1');
    expect(r.out).toContain('|  ELIFECYCLE  Command failed with exit code 1.');
    expect(r.out).toContain('getaddrinfo ENOTFOUND download.cypress.io');
    expect(r.out).toMatch(/\| … \d+ lines …/);
    expect(r.out).not.toContain('Progress: resolved 20,');
    expect(r.out).toContain('hint: an install script of Cypress downloads its binary');
    expect(r.out).toContain('CYPRESS_INSTALL_BINARY: "0"');
    expect(r.code).toBe(1);
  });

  it('refuses an id the file does not have, naming the ones it has', async () => {
    const r = await check('nope');
    expect(r.out).toContain('has no repository "nope" (it has: good, bad, unprepared, noisy, crashing)');
    expect(r.code).toBe(2);
  });

  it('explains an untrusted registry certificate and a registry without signing keys', () => {
    expect(hintFor('npm error code SELF_SIGNED_CERT_IN_CHAIN')).toContain('NODE_EXTRA_CA_CERTS');
    expect(hintFor('Error: No compatible signature found in package metadata')).toContain(
      'COREPACK_INTEGRITY_KEYS',
    );
    expect(
      hintFor(' ERR_PNPM_FETCH_404  GET https://registry.npmjs.org/a/-/a-1.4.1.tgz: Not Found - 404'),
    ).toContain('does not serve');
    expect(
      hintFor(
        'node_modules/puppeteer postinstall$ node install.mjs\nERROR: Failed to set up chrome: getaddrinfo ENOTFOUND storage.googleapis.com',
      ),
    ).toContain('PUPPETEER_SKIP_DOWNLOAD');
    expect(
      hintFor('node_modules/electron postinstall: RequestError: getaddrinfo ENOTFOUND github.com'),
    ).toContain('ELECTRON_SKIP_BINARY_DOWNLOAD');
    expect(hintFor('$ bun run --filter frontend lint\nsh: 1: bun: not found\n')).toContain(
      '"bun" is not installed here',
    );
    expect(hintFor('/bin/bash: line 1: uv: command not found')).toContain('"uv" is not installed here');
    const pip = hintFor(
      "WARNING: Retrying (Retry(total=0)) after connection broken by 'NewConnectionError(...: Failed to establish a new connection: [Errno -2] Name or service not known')': /simple/flask/\nERROR: Could not find a version that satisfies the requirement Flask==3.1.2 (from versions: 3.1.3)\nERROR: No matching distribution found for Flask==3.1.2\n",
    );
    expect(pip).toContain(
      'pip found no Flask==3.1.2 (the indexes it reached have 3.1.3); it could not reach an index',
    );
    expect(pip).toContain('PIP_EXTRA_INDEX_URL');
    expect(hintFor('Error: module not found: ./x')).toBeNull();
    expect(hintFor('3 tests failed')).toBeNull();
  });
});
