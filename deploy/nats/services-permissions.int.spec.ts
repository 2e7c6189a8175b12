import { connectLedger } from '@caseloop/ledger';
import { uniqueSuffix } from '@caseloop/testing';
import { ServiceEnvironments, serviceEnvironments } from '../../test/services/service-environments';
import { ServiceProcess, SERVICES, startService } from '../../test/services/service-processes';
import { NatsUser, RestrictedNats, startRestrictedNats } from './restricted-nats.fixture';

jest.setTimeout(240_000);

/**
 * The six real services, each as its own process, each as its own NATS user from
 * deploy/nats/nats.conf with its password in a 0600 file — the namespace, stream and lease bucket
 * of the deployment. A permission a service needs at start (its durable, replays, KV, lease
 * requests) and the file does not grant shows up here as a service that never gets ready.
 */
describe('every service under the deployment permissions', () => {
  let nats: RestrictedNats;
  let envs: ServiceEnvironments;
  const started: ServiceProcess[] = [];

  beforeAll(async () => {
    nats = await startRestrictedNats();
    const provisioner = await connectLedger({
      servers: nats.url,
      namespace: 'caseloop',
      stream: 'CASE_LEDGER',
      name: 'provisioner',
      user: 'provisioner',
      pass: nats.password('provisioner'),
    });
    await provisioner.provision();
    await provisioner.close();
    envs = await serviceEnvironments({ leaseBucket: 'caseloop-leases', monitorSchema: uniqueSuffix('perm') });
  });
  afterAll(async () => {
    for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    await envs?.cleanup();
    await nats?.stop();
  });

  it.each(SERVICES)('%s gets ready as its own NATS user and stops cleanly', async (name) => {
    const svc = await startService(name, {
      NATS_URL: nats.url,
      NATS_USER: name,
      NATS_PASSWORD_FILE: await envs.secretFile(`${name}_nats_password`, nats.password(name as NatsUser)),
      CASELOOP_NAMESPACE: 'caseloop',
      LEDGER_STREAM: 'CASE_LEDGER',
      ...envs.extra[name],
      LEASE_BUCKET: 'caseloop-leases',
    });
    started.push(svc);
    const res = await fetch(`${svc.url}/healthz`);
    const body = (await res.json()) as { status: string; transport: { state: string } };
    expect({ code: res.status, status: body.status, transport: body.transport.state }).toEqual({
      code: 200,
      status: 'ready',
      transport: body.transport.state === 'disabled' ? 'disabled' : 'consuming',
    });
    expect(svc.output()).not.toMatch(/Permissions Violation|permission_denied/i);
    svc.child.kill('SIGTERM');
    expect((await svc.exit).code).toBe(0);
  });
});
