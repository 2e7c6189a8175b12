import { join } from 'node:path';
import { eventually } from '@caseloop/testing';
import { appEnvironment, startTargetApp, TargetAppError } from './target-app.process';

jest.setTimeout(60_000);

const ENV_APP = join(__dirname, 'fixtures', 'env-app');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the target app process', () => {
  it("runs on a free port with none of caseloop's environment, and stops with its whole process group", async () => {
    const host = {
      PATH: process.env.PATH,
      HOME: '/tmp',
      EVIDENCE_S3_SECRET_ACCESS_KEY: 'do-not-leak',
      NATS_PASSWORD: 'nope',
    };
    const app = await startTargetApp({
      cwd: ENV_APP,
      argv: [process.execPath, 'server.js'],
      url: 'http://127.0.0.1:4300',
      readyPath: '/',
      readyTimeoutMs: 20_000,
      env: appEnvironment(host, {}),
    });
    const seen = (await (await fetch(app.baseUrl)).json()) as { env: string[]; port: string; child: number };
    expect(app.baseUrl).toBe(`http://127.0.0.1:${seen.port}`);
    expect(seen.port).not.toBe('4300');
    expect(seen.env).not.toContain('EVIDENCE_S3_SECRET_ACCESS_KEY');
    expect(seen.env).not.toContain('NATS_PASSWORD');
    expect(seen.env).toEqual(expect.arrayContaining(['PATH', 'PORT']));
    expect(alive(seen.child)).toBe(true);
    await app.stop();
    await eventually(() => !alive(seen.child), { what: 'the app child is gone', timeoutMs: 10_000 });
  });

  it('gives up, bounded, on an app that never answers, and on one that exits', async () => {
    const silent = startTargetApp({
      cwd: ENV_APP,
      argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'],
      url: 'http://127.0.0.1:4300',
      readyPath: '/',
      readyTimeoutMs: 1_000,
      env: appEnvironment(process.env, {}),
    });
    await expect(silent).rejects.toMatchObject({ reason: 'not_ready' });
    const exits = startTargetApp({
      cwd: ENV_APP,
      argv: [process.execPath, '-e', 'process.exit(3)'],
      url: 'http://127.0.0.1:4300',
      readyPath: '/',
      readyTimeoutMs: 10_000,
      env: appEnvironment(process.env, {}),
    });
    await expect(exits).rejects.toBeInstanceOf(TargetAppError);
    await expect(exits).rejects.toMatchObject({ reason: 'exited' });
  });

  it("hands an operator's terminal the output of an app that exits", async () => {
    let seen = '';
    const exits = startTargetApp({
      cwd: ENV_APP,
      argv: [
        process.execPath,
        '-e',
        'console.log("starting"); console.error("No module named flask"); process.exit(1)',
      ],
      url: 'http://127.0.0.1:4300',
      readyPath: '/',
      readyTimeoutMs: 10_000,
      env: appEnvironment(process.env, {}),
      onOutput: (text) => {
        seen += text;
      },
    });
    await expect(exits).rejects.toMatchObject({ reason: 'exited' });
    await eventually(() => seen.includes('No module named flask'), {
      what: 'stderr was handed over',
      timeoutMs: 5_000,
    });
    expect(seen).toContain('starting');
  });

  it('hands the port as a {port} argument too, and starts a client that cannot be told its port on its fixed one', async () => {
    const serve = (portFrom: string) =>
      `require('node:http').createServer((q, s) => s.end('ok')).listen(Number(${portFrom}), '127.0.0.1')`;
    const told = await startTargetApp({
      cwd: ENV_APP,
      argv: [process.execPath, '-e', serve('process.argv[1]'), '{port}'],
      url: 'http://127.0.0.1:4300',
      readyPath: '/',
      readyTimeoutMs: 20_000,
      env: appEnvironment(process.env, {}),
    });
    expect(told.baseUrl).not.toBe('http://127.0.0.1:4300');
    expect(await (await fetch(told.baseUrl)).text()).toBe('ok');

    // The fixed port is taken (by the first app): refused before anything starts, and the message says why.
    const taken = Number(new URL(told.baseUrl).port);
    await expect(
      startTargetApp({
        cwd: ENV_APP,
        argv: [process.execPath, '-e', serve(String(taken))],
        url: 'http://127.0.0.1:4300',
        fixedPort: taken,
        readyPath: '/',
        readyTimeoutMs: 5_000,
        env: appEnvironment(process.env, {}),
      }),
    ).rejects.toThrow(`port ${taken} (client.port) is already in use`);
    await told.stop();

    const fixed = await startTargetApp({
      cwd: ENV_APP,
      argv: [process.execPath, '-e', serve(String(taken))],
      url: 'http://127.0.0.1:4300',
      fixedPort: taken,
      readyPath: '/',
      readyTimeoutMs: 20_000,
      env: appEnvironment(process.env, {}),
    });
    expect(fixed.baseUrl).toBe(`http://127.0.0.1:${taken}`);
    await fixed.stop();
  });

  it("starts the client with the repository's env under its own and with the setup's package cache, so a corepack client finds what setup fetched", async () => {
    const host = { PATH: process.env.PATH, HOME: '/tmp', EVIDENCE_S3_SECRET_ACCESS_KEY: 'do-not-leak' };
    const env = appEnvironment(
      host,
      { VITE_MODE: 'e2e', SHARED: 'client' },
      {
        cacheDir: '/srv/evidence/cache',
        repositoryEnv: { COREPACK_INTEGRITY_KEYS: '0', SHARED: 'repository' },
      },
    );
    expect(env).toMatchObject({
      COREPACK_INTEGRITY_KEYS: '0',
      SHARED: 'client',
      VITE_MODE: 'e2e',
      COREPACK_HOME: '/srv/evidence/cache/corepack',
      COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
      HOME: '/tmp',
    });
    expect(env).not.toHaveProperty('EVIDENCE_S3_SECRET_ACCESS_KEY');

    const app = await startTargetApp({
      cwd: ENV_APP,
      argv: [process.execPath, 'server.js'],
      url: 'http://127.0.0.1:4300',
      readyPath: '/',
      readyTimeoutMs: 20_000,
      env,
    });
    const seen = (await (await fetch(app.baseUrl)).json()) as { env: string[] };
    expect(seen.env).toEqual(
      expect.arrayContaining(['COREPACK_HOME', 'COREPACK_INTEGRITY_KEYS', 'SHARED', 'VITE_MODE']),
    );
    expect(seen.env).not.toContain('EVIDENCE_S3_SECRET_ACCESS_KEY');
    await app.stop();
  });

  it('names what an app that listens answered when readyPath never gives 2xx (a Vite app under its base path redirects)', async () => {
    const redirecting = `require('node:http').createServer((q, s) => q.url === '/app/' ? s.end('ok') : s.writeHead(302, { location: '/app/' }).end()).listen(Number(process.env.PORT), '127.0.0.1')`;
    await expect(
      startTargetApp({
        cwd: ENV_APP,
        argv: [process.execPath, '-e', redirecting],
        url: 'http://127.0.0.1:4300',
        readyPath: '/',
        readyTimeoutMs: 1_500,
        env: appEnvironment(process.env, {}),
      }),
    ).rejects.toMatchObject({
      reason: 'not_ready',
      message: expect.stringMatching(
        /^the client listens but answered http:\/\/127\.0\.0\.1:\d+\/ with 302 to \/app\/, never 2xx, within 1500 ms: set readyPath \(and the flow's goto\) to a path it serves, e\.g\. where it redirects$/,
      ),
    });
    const app = await startTargetApp({
      cwd: ENV_APP,
      argv: [process.execPath, '-e', redirecting],
      url: 'http://127.0.0.1:4300',
      readyPath: '/app/',
      readyTimeoutMs: 20_000,
      env: appEnvironment(process.env, {}),
    });
    await app.stop();
  });
});
