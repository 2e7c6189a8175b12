import { ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropStackState } from '@caseloop/stack';
import { NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { REPORTS, until } from './e2e/loop.fixture';

jest.setTimeout(600_000);

const ROOT = join(__dirname, '..');

interface ChatMessage {
  id: string;
  content: string;
  author: { username: string; bot: boolean };
}

/** The README's start command, as a newcomer runs it: a report typed on the chat page reaches a receipt and an approval. */
describe('npm start (the sandbox)', () => {
  const namespace = uniqueSuffix('sbx').replace(/[^a-z0-9_]/g, '');
  let dir = '';
  let child: ChildProcess | null = null;
  let out = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'caseloop-sandbox-'));
  });
  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await dropStackState({
      natsUrl: NATS_URL,
      databaseUrl: PG_URL,
      stream: `${namespace.toUpperCase()}_LEDGER`,
      dbSchema: `caseloop_${namespace}`,
      leaseBucket: `${namespace}-leases`,
    });
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the chat page, narrates a case to its receipt and approval, and stops cleanly on Ctrl-C', async () => {
    const t0 = Date.now();
    child = spawn('bash', ['scripts/start.sh'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        // This run already has its dependencies; an install under a running suite would pull node_modules away from it.
        CASELOOP_SKIP_DEPS: '1',
        CASELOOP_SANDBOX_DIR: dir,
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

    const chat = await until('the chat page URL', 300_000, () => {
      if (child?.exitCode !== null) throw new Error(`npm start exited: ${out.slice(-3000)}`);
      return /chat page:\s+(http:\/\/127\.0\.0\.1:\d+)\/sandbox/.exec(out)?.[1];
    });
    expect(out).toMatch(/case page:\s+http:\/\/127\.0\.0\.1:\d+\/cases/);
    const api = async <T>(path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${chat}${path}`, {
        method: body ? 'POST' : 'GET',
        headers: body ? { 'content-type': 'application/json' } : {},
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      if (!res.ok) throw new Error(`${path}: ${res.status}`);
      return (await res.json()) as T;
    };
    const state = await api<{
      channels: { id: string; name: string }[];
      users: { id: string; username: string }[];
    }>('/sandbox/state');
    const bugs = state.channels.find((c) => c.name === 'bugs')?.id;
    const user = (name: string) => state.users.find((u) => u.username === name)?.id;

    const report = await api<ChatMessage>('/sandbox/messages', {
      channelId: bugs,
      authorId: user('alice'),
      content: REPORTS.cartTotal,
    });
    const caseId = await until('the case narrated', 120_000, () => /case (C[0-9A-Z]+) opened/.exec(out)?.[1]);
    await until('awaiting a reviewer', 300_000, () =>
      out.includes(`case ${caseId}: receipts confirmed in every thread`),
    );
    const thread = await api<ChatMessage[]>(`/sandbox/channels/${report.id}/messages`);
    expect(thread.some((m) => m.author.bot && m.content.includes(caseId))).toBe(true);
    expect(thread.some((m) => m.author.bot && m.content.includes('**Outcome:** PR ready'))).toBe(true);
    expect(out).toMatch(
      new RegExp(
        `case ${caseId}: screenshot stored and read back: http://127\\.0\\.0\\.1:\\d+/evidence/cases/${caseId}/`,
      ),
    );

    await api('/sandbox/messages', { threadId: report.id, authorId: user('rita'), content: 'approve' });
    await until('approved', 120_000, () =>
      out.includes(`case ${caseId}: approved; branch caseloop/${caseId}`),
    );

    child.kill('SIGINT');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(out).toContain('stopped.');
    process.stdout.write(`npm start: up, report to approval and stopped in ${Date.now() - t0} ms\n`);
  });
});
