import { connectLedger, Ledger } from '@caseloop/ledger';
import { LeaseClient } from '@caseloop/lease-client';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { connect, NatsConnection } from 'nats';
import { RestrictedNats, startRestrictedNats } from '../../../../deploy/nats/restricted-nats.fixture';
import { LeaseConfig, leaseConfig } from '../lease.config';
import { LeaseModule } from '../lease.module';

jest.setTimeout(120_000);

/** The names deploy/nats/nats.conf grants: the production namespace, stream and bucket. */
const NAMESPACE = 'caseloop';
const STREAM = 'CASE_LEDGER';
const BUCKET = 'caseloop-leases';
const REV = 'abcd'.padEnd(40, '0');

describe('leases under the deployment NATS users', () => {
  let nats: RestrictedNats;
  let service: RunningService<LeaseConfig>;
  let audit: Ledger;
  const conns: NatsConnection[] = [];
  const client = async (user: 'evidence' | 'worker' | 'monitor') => {
    const nc = await connect({ servers: nats.url, user, pass: nats.password(user), noAsyncTraces: true });
    conns.push(nc);
    return LeaseClient.connect(nc, { namespace: NAMESPACE, bucket: BUCKET });
  };

  beforeAll(async () => {
    nats = await startRestrictedNats();
    const provisioner = await connectLedger({
      servers: nats.url,
      namespace: NAMESPACE,
      stream: STREAM,
      name: 'provisioner',
      user: 'provisioner',
      pass: nats.password('provisioner'),
    });
    await provisioner.provision();
    await provisioner.close();
    service = await bootstrapService({
      name: 'lease',
      config: leaseConfig,
      module: (c) => LeaseModule.forRoot(c),
      consumer: false,
      env: {
        NATS_URL: nats.url,
        NATS_USER: 'lease',
        NATS_PASSWORD: nats.password('lease'),
        HTTP_PORT: '0',
        HTTP_HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        LEASE_SKEW_MS: '200',
        LEASE_SWEEP_INTERVAL_MS: '50',
      },
    });
    audit = await connectLedger({
      servers: nats.url,
      namespace: NAMESPACE,
      stream: STREAM,
      name: 'audit',
      user: 'audit',
      pass: nats.password('audit'),
    });
  });
  afterAll(async () => {
    await service?.close();
    for (const nc of conns) await nc.close();
    await audit?.close();
    await nats?.stop();
  });

  it('lets the lease service create its bucket and record on the case, and evidence acquire, check, bind and release', async () => {
    const evidence = await client('evidence');
    const lease = await evidence.acquire({
      resource: 'browser:default',
      caseId: 'CPERM1',
      taskId: 'TPERM1',
      revision: REV,
      ttlMs: 10_000,
      waitTimeoutMs: 10_000,
    });
    expect((await lease.check()).holder).toBe(true);
    expect((await lease.bindCapture('cap1')).holder).toBe(true);
    expect(await lease.release()).toMatchObject({ standing: 'released' });
    const events = (await audit.store.load('case', 'CPERM1')).events;
    expect(events.map((e) => [e.type, e.producer])).toEqual([
      ['LeaseRequested', 'lease'],
      ['LeaseGranted', 'lease'],
      ['LeaseReleased', 'lease'],
    ]);
  });

  it('lets the worker ask too, and keeps the monitor from asking', async () => {
    const worker = await client('worker');
    const lease = await worker.acquire({
      resource: 'browser:default',
      caseId: 'CPERM2',
      taskId: 'TPERM2',
      revision: REV,
      ttlMs: 10_000,
      waitTimeoutMs: 10_000,
    });
    const monitor = await client('monitor');
    // Only the service may change a lease: the monitor cannot even ask.
    await expect(
      monitor.acquire({
        resource: 'browser:default',
        caseId: 'CPERM3',
        taskId: 'TPERM3',
        revision: REV,
        ttlMs: 1_000,
        waitTimeoutMs: 0,
      }),
    ).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringContaining('Permissions Violation'),
    });
    // deploy/nats/nats.conf lets the worker ask, but not read the bucket: no `check` for it yet
    expect(await lease.release()).toMatchObject({ standing: 'released' });
  });
});
