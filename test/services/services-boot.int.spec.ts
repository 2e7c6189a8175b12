import { connectLedger } from '@caseloop/ledger';
import { NATS_URL, uniqueSuffix } from '@caseloop/testing';
import { connect } from 'nats';
import { ServiceEnvironments, serviceEnvironments } from './service-environments';
import { ServiceProcess, SERVICES, startService } from './service-processes';

jest.setTimeout(180_000);

describe('every service as its own process', () => {
  const namespace = uniqueSuffix();
  const stream = `T${namespace.toUpperCase()}`;
  const started: ServiceProcess[] = [];
  const monitorSchema = uniqueSuffix('boot');
  const leaseBucket = `${namespace}-leases`;
  let envs: ServiceEnvironments;

  beforeAll(async () => {
    envs = await serviceEnvironments({ leaseBucket, monitorSchema });
    const ledger = await connectLedger({ servers: NATS_URL, namespace, stream, name: 'provisioner' });
    await ledger.provision();
    await ledger.close();
  });
  afterAll(async () => {
    for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    const nc = await connect({ servers: NATS_URL });
    const jsm = await nc.jetstreamManager();
    for (const s of [stream, `${stream}_DLQ`, `KV_${leaseBucket}`])
      await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
    await envs?.cleanup();
  });

  it.each(SERVICES)('%s boots, reports ready on /healthz, and exits 0 on SIGTERM', async (name) => {
    const svc = await startService(name, {
      NATS_URL,
      CASELOOP_NAMESPACE: namespace,
      LEDGER_STREAM: stream,
      ...envs.extra[name],
    });
    started.push(svc);
    const res = await fetch(`${svc.url}/healthz`);
    const body = (await res.json()) as {
      service: string;
      status: string;
      nats: { state: string };
      transport: { state: string; consumer: string };
    };
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ service: name, status: 'ready', nats: { state: 'connected' } });
    // A service that reacts to ledger events consumes with its own durable; others declare consumer: false.
    const consuming = body.transport.state !== 'disabled';
    expect(body.transport).toEqual(
      consuming ? { state: 'consuming', consumer: name } : { state: 'disabled', consumer: null },
    );
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toContain(`process_cpu_user_seconds_total{service="${name}"}`);
    if (consuming) expect(metrics).toContain(`caseloop_consumer_ready{service="${name}"} 1`);

    svc.child.kill('SIGTERM');
    const exit = await svc.exit;
    expect({ ...exit, output: exit.code === 0 ? '' : svc.output().slice(-2000) }).toEqual({
      code: 0,
      signal: null,
      output: '',
    });
    expect(svc.output()).toContain('"msg":"stopped"');
  });

  it('refuses to start with bad configuration, naming the key and not the value', async () => {
    const err = await startService('monitor', {
      NATS_URL,
      CASELOOP_NAMESPACE: 'not.safe',
      HTTP_PORT: 'secret-looking-value',
    }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toContain(
      'monitor exited 1: monitor: invalid configuration: CASELOOP_NAMESPACE: has an invalid format; HTTP_PORT: expected number',
    );
    expect(message).not.toContain('secret-looking-value');
    expect(message).not.toContain('not.safe');
  });
});
