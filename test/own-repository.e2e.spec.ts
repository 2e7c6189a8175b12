import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropStackState, git } from '@caseloop/stack';
import { NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { stringify } from 'yaml';
import { runCli, until } from './e2e/loop.fixture';

// Bounded everywhere: the install comes from the npm registry into a fresh cache, the rest is local.
jest.setTimeout(300_000);

const ROOT = join(__dirname, '..');

const tail = (file: string): string => {
  try {
    return readFileSync(file, 'utf8').slice(-2500);
  } catch {
    return '(no log)';
  }
};

interface ChatMessage {
  id: string;
  content: string;
  author: { username: string; bot: boolean };
}

/**
 * The receipt as the reporter reads it: Discord holds at most 2000 characters a message, so a long
 * receipt arrives as consecutive bot messages, from its heading to its closing decision line.
 */
function receiptIn(thread: ChatMessage[]): string {
  const posts = thread.filter((m) => m.author.bot);
  const first = posts.findIndex((m) => m.content.includes('**caseloop receipt**'));
  if (first < 0) throw new Error(`no receipt in the thread: ${JSON.stringify(posts.map((m) => m.content))}`);
  const last = posts.findIndex((m, i) => i >= first && m.content.includes('**Your decision:**'));
  if (last < 0) throw new Error('the receipt never reached its decision line');
  return posts
    .slice(first, last + 1)
    .map((m) => m.content)
    .join('\n');
}

const REPORT =
  'The per-person amount is wrong when a tip is set: a €80 bill with a 15% tip for 4 people shows €23.75 each instead of €23.00. Expected the tip to be 15% of the bill. Split-bill web app in Chrome 120, version 2.1.0. Customers are overcharged on every bill with a tip; screenshot attached.';

/**
 * A newcomer's path with their own repository, through the commands the README gives: `caseloop
 * repo init <their checkout>`, then `npm start -- --repositories <what it wrote>`. The repository
 * is the Vite example (TypeScript, a lockfile that needs an install, Vitest, a dev server, a page
 * without <title>) as a plain git checkout; the agent routes are the scripted fix, since no model
 * is reachable here.
 */
describe('npm start on your own repository (repo init, then start)', () => {
  const namespace = uniqueSuffix('own').replace(/[^a-z0-9_]/g, '');
  let dir = '';
  let child: ChildProcess | null = null;
  let out = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'caseloop-own-'));
  });
  afterEach(() => {
    const state = expect.getState();
    if (state.assertionCalls > state.numPassingAsserts || !out.includes('approved;')) {
      process.stdout.write(`npm start said:\n${out.slice(-4000)}\n`);
      for (const s of ['worker', 'evidence', 'coordinator'])
        process.stdout.write(`--- ${s}\n${tail(join(dir, 'sandbox', 'logs', `${s}.log`))}\n`);
    }
  });
  afterAll(async () => {
    // The sandbox leads its own process group: every service and app it started goes with it.
    if (child?.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await dropStackState({
      natsUrl: NATS_URL,
      databaseUrl: PG_URL,
      stream: `${namespace.toUpperCase()}_LEDGER`,
      dbSchema: `caseloop_${namespace}`,
      leaseBucket: `${namespace}-leases`,
    });
    await rm(dir, { recursive: true, force: true });
  });

  it('repo init writes an entry that npm start runs: report → setup, checks, Vite page captured → receipt → approved, branch in the checkout', async () => {
    const t0 = Date.now();
    // The user's checkout: the example committed on main, no node_modules.
    const app = join(dir, 'split-bill');
    await cp(join(ROOT, 'examples', 'split-bill'), app, {
      recursive: true,
      filter: (src) => !/node_modules|[/\\]dist$/.test(src),
    });
    await git(app, ['init', '--quiet', '--initial-branch=main']);
    await git(app, ['add', '--all']);
    await git(app, ['commit', '--quiet', '-m', 'split-bill 2.1.0']);
    const mainBefore = await git(app, ['rev-parse', 'HEAD']);

    const config = join(dir, 'caseloop');
    const repositories = join(config, 'repositories.yaml');
    const init = await runCli(['repo', 'init', app, '--out', repositories], {});
    expect(init).toMatchObject({ code: 0 });
    expect(init.out).toContain('setup: npm ci --no-audit --no-fund');
    expect(init.out).toContain(
      'checks: typecheck (typecheck), focused (focused_test), test (regression_test), build (build)',
    );
    const written = await readFile(repositories, 'utf8');
    expect(written).toContain('flow: flows/split-bill.yaml');
    expect(written).toContain('"{port}"');
    // The agent routes: the scripted runtime holds the fix (the user would pin a model here instead).
    await writeFile(
      join(config, 'agent-routes.yaml'),
      stringify({
        normal: {
          name: 'scripted',
          timeoutMs: 60_000,
          runtime: { kind: 'scripted', steps: [{ copy: join(ROOT, 'examples', 'split-bill-fix') }] },
        },
        escalation: null,
        maxAttempts: 2,
      }),
    );

    child = spawn('bash', ['scripts/start.sh', '--repositories', repositories], {
      cwd: ROOT,
      detached: true,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
        CASELOOP_SKIP_DEPS: '1',
        CASELOOP_SANDBOX_DIR: join(dir, 'sandbox'),
        CASELOOP_SANDBOX_PORTS: 'any',
        CASELOOP_SANDBOX_NAMESPACE: namespace,
        CASELOOP_NATS_URL: NATS_URL,
        CASELOOP_DATABASE_URL: PG_URL,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child?.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const alive = () => {
      if (child?.exitCode !== null) throw new Error(`npm start exited: ${out.slice(-3000)}`);
    };
    // npm start ending early fails the wait at once, with its output, not at the wait's timeout.
    const died = exited.then(({ code, signal }) => {
      throw new Error(`npm start exited (${code ?? signal}): ${out.slice(-3000)}`);
    });
    died.catch(() => undefined);
    const waitFor = <T>(what: string, ms: number, probe: () => T | null | undefined | false) =>
      Promise.race([until(what, ms, probe), died]);

    const chat = await waitFor('the chat page URL', 150_000, () => {
      alive();
      return /chat page:\s+(http:\/\/127\.0\.0\.1:\d+)\/sandbox/.exec(out)?.[1];
    });
    expect(out).toContain(`target repository: split-bill (${app}, main)`);
    const api = async <T>(path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${chat}${path}`, {
        method: body ? 'POST' : 'GET',
        headers: body ? { 'content-type': 'application/json' } : {},
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) throw new Error(`${path}: ${res.status}`);
      return (await res.json()) as T;
    };
    const state = await api<{
      channels: { id: string; name: string }[];
      users: { id: string; username: string }[];
    }>('/sandbox/state');
    const user = (name: string) => state.users.find((u) => u.username === name)?.id;
    const report = await api<ChatMessage>('/sandbox/messages', {
      channelId: state.channels.find((c) => c.name === 'bugs')?.id,
      authorId: user('alice'),
      content: REPORT,
    });
    const caseId = await waitFor('the case narrated', 60_000, () => {
      alive();
      return /case (C[0-9A-Z]+) opened/.exec(out)?.[1];
    });
    await waitFor('checks passed on the case branch', 180_000, () => {
      alive();
      if (out.includes(`case ${caseId}: blocked`)) throw new Error(`blocked: ${out.slice(-3000)}`);
      return out.includes(`case ${caseId}: checks passed at`);
    });
    await waitFor('awaiting a reviewer', 120_000, () => {
      alive();
      if (out.includes(`case ${caseId}: blocked`)) throw new Error(`blocked: ${out.slice(-3000)}`);
      return out.includes(`case ${caseId}: receipts confirmed in every thread`);
    });
    expect(out).toContain(`case ${caseId}: client flow passed`);
    const receipt = receiptIn(await api<ChatMessage[]>(`/sandbox/channels/${report.id}/messages`));
    expect(receipt).toContain('**Outcome:** PR ready');
    expect(receipt).toMatch(/\*\*Client flow:\*\* `[^`]+` — passed/);
    expect(receipt).toContain('each-pays-with-tip');
    for (const check of ['setup:install', 'typecheck', 'focused', 'test', 'build'])
      expect(receipt).toMatch(new RegExp(`✅ \`${check}\` \\([a-z_]+\\) passed`));

    await api('/sandbox/messages', { threadId: report.id, authorId: user('rita'), content: 'approve' });
    await waitFor('approved', 60_000, () => {
      alive();
      return out.includes(`case ${caseId}: approved; branch caseloop/${caseId}`);
    });
    // The branch waits in the user's own checkout; main is where it was.
    expect(await git(app, ['branch', '--list', `caseloop/${caseId}`])).toContain(`caseloop/${caseId}`);
    expect(await git(app, ['rev-parse', 'main'])).toBe(mainBefore);
    const fixed = await git(app, ['show', `caseloop/${caseId}:src/split.ts`]);
    expect(fixed).toContain('100 + tipPercent');

    child.kill('SIGINT');
    expect(await exited).toEqual({ code: 0, signal: null });
    process.stdout.write(
      `own repository: repo init, start, report to approval and stopped in ${Date.now() - t0} ms\n`,
    );
  });
});
