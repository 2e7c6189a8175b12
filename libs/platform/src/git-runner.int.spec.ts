import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { Git, GitError, installAskpass } from './git-runner';

jest.setTimeout(30_000);

const TEST_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@localhost',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@localhost',
};
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd,
    env: TEST_ENV,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();

/** The git every service runs: what reaches it, what it reads, and when it is stopped. */
describe('Git (the shared runner)', () => {
  let root: string;
  let runner: Git;
  const TOKEN = 'tok-s3cr3t-value';

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'caseloop-git-runner-'));
    runner = new Git({
      askpassPath: await installAskpass(join(root, 'askpass')),
      inheritedEnv: { PATH: process.env.PATH, SERVICE_SECRET: 'do-not-pass-on' },
    });
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  describe('credentials reach git through the askpass helper only', () => {
    let server: Server;
    let url: string;
    const seen: (string | undefined)[] = [];

    beforeAll(async () => {
      // A remote over (dumb) HTTP that wants basic auth, so git has to ask for credentials.
      const bare = join(root, 'remote.git');
      const work = join(root, 'work');
      git(root, 'init', '--quiet', '--bare', bare);
      await mkdir(work);
      git(work, 'init', '--quiet', '-b', 'main');
      git(work, 'commit', '--quiet', '--allow-empty', '-m', 'first');
      git(work, 'push', '--quiet', bare, 'main');
      git(bare, 'update-server-info');
      server = createServer((req, res) => {
        seen.push(req.headers.authorization);
        const want = `Basic ${Buffer.from(`alice:${TOKEN}`).toString('base64')}`;
        if (req.headers.authorization !== want) {
          res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="test"' }).end();
          return;
        }
        const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0] ?? '/'));
        readFile(join(bare, path.replace(/^\/remote\.git/, ''))).then(
          (body) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(body),
          () => res.writeHead(404).end(),
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/remote.git`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('answers the remote from the credentials file; without it git fails at once instead of prompting', async () => {
      const credentials = join(root, 'credentials');
      await writeFile(credentials, `alice:${TOKEN}\n`, { mode: 0o600 });
      const r = await runner.run(['ls-remote', '--heads', url], { cwd: root, credentialsFile: credentials });
      expect(r.stdout).toMatch(/refs\/heads\/main/);
      expect(seen).toContain(`Basic ${Buffer.from(`alice:${TOKEN}`).toString('base64')}`);

      const denied = await runner.run(['ls-remote', '--heads', url], { cwd: root }).catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(GitError);
      expect((denied as GitError).code).toBe('git_failed');
      expect((denied as GitError).message).not.toContain(TOKEN);
    });

    it("puts the token on no command line and in no environment of git's: only the file's name", async () => {
      const credentials = join(root, 'credentials');
      const repo = join(root, 'work');
      // What a process git starts sees: git's own command line (its parent's) and the environment.
      const dump = await runner.run(
        ['-c', `alias.dump=!tr '\\0' ' ' < /proc/$PPID/cmdline; echo; env`, 'dump'],
        { cwd: repo, credentialsFile: credentials },
      );
      expect(dump.stdout).not.toContain(TOKEN);
      expect(dump.stdout).not.toContain('SERVICE_SECRET');
      const env = dump.stdout.split('\n');
      expect(env).toEqual(
        expect.arrayContaining([
          `CASELOOP_GIT_CREDENTIALS_FILE=${credentials}`,
          'GIT_TERMINAL_PROMPT=0',
          'GIT_CONFIG_NOSYSTEM=1',
          'GIT_CONFIG_GLOBAL=/dev/null',
          'HOME=/nonexistent',
        ]),
      );
      expect(dump.stdout).toContain('core.hooksPath=/dev/null');
    });
  });

  it("runs no hook, not the repository's own nor one its config points to", async () => {
    const repo = join(root, 'hooked');
    await mkdir(repo);
    git(repo, 'init', '--quiet', '-b', 'main');
    const marker = join(root, 'hook-ran');
    const hook = `#!/bin/sh\necho "$0" >> ${marker}\n`;
    for (const dir of [join(repo, '.git', 'hooks'), join(root, 'configured-hooks')]) {
      await mkdir(dir, { recursive: true });
      for (const name of ['pre-commit', 'post-commit', 'post-checkout']) {
        await writeFile(join(dir, name), hook);
        await chmod(join(dir, name), 0o755);
      }
    }
    await runner.run(['commit', '--quiet', '--allow-empty', '-m', 'one'], { cwd: repo });
    await runner.run(['checkout', '--quiet', '-b', 'other'], { cwd: repo });
    git(repo, 'config', 'core.hooksPath', join(root, 'configured-hooks'));
    await runner.run(['commit', '--quiet', '--allow-empty', '-m', 'two'], { cwd: repo });
    expect(existsSync(marker)).toBe(false);
    // the same commit outside the runner does run them: the hooks are live
    git(repo, 'commit', '--quiet', '--allow-empty', '-m', 'three');
    expect(existsSync(marker)).toBe(true);
  });

  it('kills git and everything it started at the timeout', async () => {
    const started = Date.now();
    // The shell and its sleep hold git's stdout: only a kill of the whole group ends the command.
    const r = await runner
      .run(['-c', 'alias.hang=!sleep 20', 'hang'], { cwd: root, timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(r).toBeInstanceOf(GitError);
    expect((r as GitError).code).toBe('git_timeout');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('fails a command whose output passes the cap rather than hand back part of it', async () => {
    const r = await runner
      .run(['-c', 'alias.flood=!head -c 40000000 /dev/zero', 'flood'], { cwd: root, allowFailure: true })
      .catch((e: unknown) => e);
    expect(r).toBeInstanceOf(GitError);
    expect((r as GitError).code).toBe('git_failed');
    expect((r as GitError).message).toMatch(/output exceeded/);
  });
});
