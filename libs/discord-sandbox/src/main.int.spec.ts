import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually } from '@caseloop/testing';

jest.setTimeout(60_000);

const ROOT = resolve(__dirname, '../../..');
const MAIN = join(ROOT, 'libs/discord-sandbox/src/main.ts');
const SEED = join(ROOT, 'libs/discord-sandbox/seed/sandbox.yaml');

describe('the local-discord CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'local-discord-cli-'));
  let child: ChildProcess | undefined;
  let stdout = '';

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts from the sandbox seed with its fixed ids, writes a 0600 token file and the state, and serves the API with that token', async () => {
    const tokenFile = join(dir, 'token');
    const stateFile = join(dir, 'state.json');
    child = spawn(
      process.execPath,
      ['-r', '@swc-node/register', MAIN, '--seed', SEED, '--token-file', tokenFile, '--state-out', stateFile],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await eventually(() => stdout.includes('@caseloop'), { what: 'CLI banner', timeoutMs: 30_000 });

    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(stdout).not.toContain(token);
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as {
      urls: { apiUrl: string; sandboxUrl: string };
      guild: { id: string };
      channels: { name: string; id: string; mode: string }[];
      users: { username: string; persona: string }[];
    };
    expect(state.guild.id).toBe('1461329068032159744');
    expect(state.channels).toEqual([
      { id: '1461329068032159745', name: 'bugs', mode: 'open' },
      { id: '1461329068032159746', name: 'feedback', mode: 'mention' },
    ]);
    expect(state.users.map((u) => `${u.username}:${u.persona}`)).toEqual([
      'alice:reporter',
      'bob:reporter',
      'rita:reviewer',
      'sam:stranger',
    ]);

    const me = await fetch(`${state.urls.apiUrl}/v10/users/@me`, {
      headers: { Authorization: `Bot ${token}` },
    });
    expect(((await me.json()) as { username: string }).username).toBe('caseloop');
    const page = await fetch(state.urls.sandboxUrl);
    expect(page.headers.get('content-type')).toContain('text/html');
  });
});
