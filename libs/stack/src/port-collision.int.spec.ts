import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer, Server } from 'node:http';
import { createServer as createTcpServer, Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { connect } from 'nats';
import { freePort, PortTakenError, ServiceProcess } from './service-process';
import { dropStackState, Stack, startStack } from './stack';

/**
 * Several stacks on one machine: a port the stack picked for a service is taken by another process
 * before the service binds it. That process, answering /healthz "ready" itself, must never be
 * counted as the service; the stack moves the service to another port (and restarts whoever was told
 * the old one), and a restart on a port taken meanwhile fails, naming it.
 */
jest.setTimeout(300_000);

const namespace = uniqueSuffix('port');
const stream = `T${namespace.toUpperCase()}`;
const leaseBucket = `${namespace}-leases`;
let dir: string;
const holders: (Server | TcpServer)[] = [];

/** Another stack's service on `port`: answers /healthz ready, as any caseloop service does. */
async function impostor(port: number, service: string): Promise<{ asked: () => number }> {
  let asked = 0;
  const srv = createHttpServer((req, res) => {
    if (req.url === '/healthz') asked++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ service, status: 'ready', nats: { state: 'connected' }, instance: 'someone-else' }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => resolve());
  });
  holders.push(srv);
  return { asked: () => asked };
}

const close = (srv: Server | TcpServer) => new Promise<void>((r) => srv.close(() => r()));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'caseloop-ports-'));
});
afterEach(async () => {
  for (const h of holders.splice(0)) await close(h);
});
afterAll(async () => {
  const nc = await connect({ servers: NATS_URL });
  const jsm = await nc.jetstreamManager();
  for (const s of [stream, `${stream}_DLQ`, `KV_${leaseBucket}`])
    await jsm.streams.delete(s).catch(() => undefined);
  await nc.close();
  await rm(dir, { recursive: true, force: true });
});

const leaseEnv = () => ({
  NATS_URL,
  CASELOOP_NAMESPACE: namespace,
  LEDGER_STREAM: stream,
  LEDGER_PROVISION: 'true',
  LEASE_BUCKET: leaseBucket,
  LOG_LEVEL: 'info',
});

describe('a service whose port another process holds', () => {
  it('is not ready when another process answers /healthz ready on its port', async () => {
    const port = await freePort();
    const other = await impostor(port, 'lease');
    const svc = new ServiceProcess('lease', port, join(dir, 'lease-impostor.log'), leaseEnv());
    svc.start();
    const err = await svc.waitReady(120_000).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(other.asked()).toBeGreaterThan(0);
    expect(err).toBeInstanceOf(PortTakenError);
    expect(err?.message).toContain(`lease: port ${port} is held by another process`);
    expect(err?.message).toContain('someone-else');
    // The service that could not have its port is not left running.
    expect(svc.running).toBe(false);
  });

  it('fails with the port named when the service cannot bind it (EADDRINUSE)', async () => {
    const port = await freePort();
    // A listener that answers no HTTP: the service's own bind failure is what tells.
    const raw = createTcpServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => raw.listen(port, '127.0.0.1', () => resolve()));
    holders.push(raw);
    const svc = new ServiceProcess('lease', port, join(dir, 'lease-bind.log'), leaseEnv());
    svc.start();
    const err = await svc.waitReady(120_000).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(PortTakenError);
    expect(err?.message).toContain(`lease: port ${port} is held by another process`);
    expect(err?.message).toContain('EADDRINUSE');
    expect(svc.running).toBe(false);
  });
});

describe('a stack whose picked port is taken before the service binds it', () => {
  let stack: Stack | null = null;
  afterAll(async () => {
    if (stack) {
      await stack.stop();
      await dropStackState(stack);
    }
  });

  it('moves the service to another port, restarts who named the old one, and a restart on a taken port fails naming it', async () => {
    const takenPort = await freePort();
    const other = await impostor(takenPort, 'evidence');
    const lines: string[] = [];
    const stackNamespace = uniqueSuffix('portstack');
    stack = await startStack({
      dir: join(dir, 'stack'),
      natsUrl: NATS_URL,
      databaseUrl: PG_URL,
      namespace: stackNamespace,
      stream: `T${stackNamespace.toUpperCase()}`,
      dbSchema: stackNamespace,
      leaseBucket: `${stackNamespace}-leases`,
      chromium: null,
      services: ['lease', 'evidence', 'console'],
      readyTimeoutMs: 180_000,
      // The evidence service is handed the port the impostor holds, once.
      pickPort: (() => {
        let handedOut = false;
        return async (service) => {
          if (service === 'evidence' && !handedOut) {
            handedOut = true;
            return takenPort;
          }
          return freePort();
        };
      })(),
      log: (line) => lines.push(line),
    });

    expect(other.asked()).toBeGreaterThan(0);
    expect(lines).toContain(`evidence: port ${takenPort} taken by another process, moving to another`);
    const evidenceUrl = stack.urls.services.evidence;
    expect(evidenceUrl).not.toBe(`http://127.0.0.1:${takenPort}`);
    expect(stack.services.evidence.url).toBe(evidenceUrl);
    // What answers there is the evidence service this stack started, not the impostor.
    const health = (await (await fetch(`${evidenceUrl}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({
      service: 'evidence',
      status: 'ready',
      instance: stack.services.evidence.instanceId,
    });
    // The console was told the evidence service's URL: it runs with the new one.
    expect(stack.services.console.env.EVIDENCE_PUBLIC_URL).toBe(evidenceUrl);
    expect(stack.services.evidence.env.EVIDENCE_PUBLIC_URL).toBe(evidenceUrl);
    expect(stack.services.console.running).toBe(true);
    const consoleStarts = (await readFile(stack.services.console.logFile, 'utf8')).match(/"msg":"starting"/g);
    expect(consoleStarts?.length).toBe(2);

    // The console is killed; while it is down another process takes its port.
    const consolePort = stack.services.console.port;
    await stack.kill('console');
    const squatter = await impostor(consolePort, 'console');
    const err = await stack.restart('console').then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(squatter.asked()).toBeGreaterThan(0);
    expect(err?.message).toContain(
      `console cannot restart: another process took its port ${consolePort} while it was down`,
    );
    expect(stack.services.console.running).toBe(false);
  });
});
