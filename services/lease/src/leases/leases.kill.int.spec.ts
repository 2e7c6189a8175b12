import { ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { RecordedEvent } from '@caseloop/contracts';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { LeaseClient } from '@caseloop/lease-client';
import { eventually, NATS_URL, uniqueSuffix } from '@caseloop/testing';
import { connect, NatsConnection } from 'nats';

/**
 * The lease service as a process of its own, killed with SIGKILL between a request and its grant
 * (nothing runs on the way out), then started again: the waiter is granted by the new process, and
 * a grant whose requester has gone is released as unused and recorded.
 */
jest.setTimeout(180_000);

const REV = 'dead'.padEnd(40, '0');
const namespace = uniqueSuffix('k');
const stream = `T${namespace.toUpperCase()}`;
const bucket = `L${namespace}`;
const CLAIM_MS = 1_500;
const ask = (resource: string, caseId: string, waitTimeoutMs = 60_000) => ({
  resource,
  caseId,
  taskId: `T${caseId}`,
  revision: REV,
  ttlMs: 60_000,
  waitTimeoutMs,
});
const types = (events: RecordedEvent[]) => events.map((e) => e.type);

let child: ChildProcess | null = null;
let reader: Ledger;
const connections: NatsConnection[] = [];

/** Starts the lease service's main.ts; resolves once it logs `ready`. */
async function startService(): Promise<ChildProcess> {
  const p = spawn(process.execPath, ['-r', '@swc-node/register', 'services/lease/src/main.ts'], {
    env: {
      ...process.env,
      CASELOOP_NAMESPACE: namespace,
      LEDGER_STREAM: stream,
      LEDGER_PROVISION: 'true',
      NATS_URL,
      HTTP_PORT: '0',
      HTTP_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      LEASE_BUCKET: bucket,
      LEASE_SKEW_MS: '200',
      LEASE_SWEEP_INTERVAL_MS: '100',
      LEASE_CLAIM_MS: String(CLAIM_MS),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    p.once('exit', (code) => reject(new Error(`lease service exited with ${code}`)));
    createInterface({ input: p.stdout! }).on('line', (line) => {
      if (line.includes('"msg":"ready"')) resolve();
    });
  });
  child = p;
  return p;
}

async function kill(p: ChildProcess): Promise<void> {
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGKILL');
  await exited;
  child = null;
}

async function newClient(): Promise<{ client: LeaseClient; nc: NatsConnection }> {
  const nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
  connections.push(nc);
  return { nc, client: await LeaseClient.connect(nc, { namespace, bucket, pollMs: 100, resendMs: 500 }) };
}

beforeAll(async () => {
  await startService();
  reader = await connectLedger({ servers: NATS_URL, namespace, stream, name: 'lease-kill-reader' });
});
afterAll(async () => {
  if (child) await kill(child);
  for (const nc of connections) if (!nc.isClosed()) await nc.close();
  for (const name of [stream, `${stream}_DLQ`, `KV_${bucket}`])
    await reader?.jsm.streams.delete(name).catch(() => undefined);
  await reader?.close();
});

const events = async (caseId: string) => (await reader.store.load('case', caseId)).events;

it('grants a waiter whose lease service was killed between its request and its grant, once a new one runs', async () => {
  const { client } = await newClient();
  const a = await client.acquire(ask('browser:kill', 'KA'));
  const waiting = client.acquire(ask('browser:kill', 'KB'));
  await eventually(async () => types(await events('KB')).includes('LeaseRequested'), { what: 'B in line' });

  await kill(child!);
  // With no lease service the release cannot go through; the holder keeps its grant meanwhile.
  const released = a.release(['cap-a']);
  await startService();
  expect(await released).toMatchObject({ standing: 'released' });
  const b = await waiting;
  expect(b.token).toBeGreaterThan(a.token);
  expect((await b.check()).holder).toBe(true);
  await b.release();
  expect(types(await events('KB'))).toEqual(['LeaseRequested', 'LeaseGranted', 'LeaseReleased']);
});

it('releases a grant its requester never claimed, records it, and serves the next in line', async () => {
  const holder = await newClient();
  const gone = await newClient();
  const third = await newClient();
  const a = await holder.client.acquire(ask('browser:unused', 'UA'));
  // B asks, then its process dies before the grant: nobody will claim it
  void gone.client.acquire(ask('browser:unused', 'UB')).catch(() => undefined);
  await eventually(async () => types(await events('UB')).includes('LeaseRequested'), { what: 'B in line' });
  await gone.nc.close();
  const c = third.client.acquire(ask('browser:unused', 'UC'));
  await eventually(async () => types(await events('UC')).includes('LeaseRequested'), { what: 'C in line' });

  // the lease service restarts meanwhile, as well
  await kill(child!);
  await startService();
  await a.release();
  const granted = await c;
  expect(types(await events('UB'))).toEqual(['LeaseRequested', 'LeaseGranted', 'LeaseReleased']);
  const release = (await events('UB'))[2];
  expect(release?.type === 'LeaseReleased' && release.data).toMatchObject({
    unclaimed: true,
    captureIds: [],
  });
  expect((await granted.check()).holder).toBe(true);
  await granted.release();
});
