import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { eventually, NATS_URL, uniqueSuffix } from '@caseloop/testing';
import { connect } from 'nats';

/**
 * A service the stack started stops when the process that started it dies, even by SIGKILL (which
 * runs no exit handler): before, it lived on as an orphan and disturbed the next run.
 */
jest.setTimeout(180_000);

const ROOT = join(__dirname, '..', '..');
const namespace = uniqueSuffix('p');
const stream = `T${namespace.toUpperCase()}`;
const bucket = `L${namespace}`;
let dir: string;
let servicePid: number | null = null;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'caseloop-parent-'));
});
afterAll(async () => {
  if (servicePid !== null && alive(servicePid)) process.kill(servicePid, 'SIGKILL');
  const nc = await connect({ servers: NATS_URL });
  const jsm = await nc.jetstreamManager();
  for (const s of [stream, `${stream}_DLQ`, `KV_${bucket}`])
    await jsm.streams.delete(s).catch(() => undefined);
  await nc.close();
  await rm(dir, { recursive: true, force: true });
});

it('a service started by the stack exits when its parent is SIGKILLed', async () => {
  const logFile = join(dir, 'lease.log');
  const env = {
    NATS_URL,
    CASELOOP_NAMESPACE: namespace,
    LEDGER_STREAM: stream,
    LEDGER_PROVISION: 'true',
    LEASE_BUCKET: bucket,
    LOG_LEVEL: 'info',
  };
  const parent = spawn(
    process.execPath,
    [
      '-r',
      '@swc-node/register',
      join(ROOT, 'test', 'services', 'fixtures', 'stack-parent.ts'),
      'lease',
      String(await freePort()),
      logFile,
      JSON.stringify(env),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json') },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const parentExited = new Promise((r) => parent.once('exit', r));
  servicePid = await new Promise<number>((resolve, reject) => {
    parent.once('exit', (code) => reject(new Error(`the parent exited with ${code}`)));
    createInterface({ input: parent.stdout! }).on('line', (line) => {
      const m = /^ready (\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
    });
  });
  const pid = servicePid;
  expect(alive(pid)).toBe(true);

  parent.kill('SIGKILL');
  await parentExited;
  await eventually(() => !alive(pid) || undefined, {
    timeoutMs: 30_000,
    what: 'the orphaned service to exit',
  });
  // It stopped as on SIGTERM (drained, logged), not by the hard timeout.
  expect(await readFile(logFile, 'utf8')).toMatch(
    /"signal":"parent gone".*"msg":"stopping"|"msg":"stopping".*"signal":"parent gone"/,
  );
});
