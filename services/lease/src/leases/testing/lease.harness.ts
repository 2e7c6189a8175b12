import { RecordedEvent } from '@caseloop/contracts';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { LeaseClient } from '@caseloop/lease-client';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { NATS_URL, uniqueSuffix } from '@caseloop/testing';
import { connect, NatsConnection } from 'nats';
import { LeaseConfig, leaseConfig } from '../../lease.config';
import { LeaseModule } from '../../lease.module';

/**
 * A booted lease service on its own namespace, stream and bucket, a separate client connection
 * (as the evidence service would have), and a ledger reader. For int tests and the benchmark.
 */
export interface LeaseHarness {
  namespace: string;
  stream: string;
  bucket: string;
  service: RunningService<LeaseConfig>;
  clientNc: NatsConnection;
  client: LeaseClient;
  reader: Ledger;
  /** Another lease service on the same namespace and bucket (a replica); closed by cleanup unless closed before. */
  replica(): Promise<RunningService<LeaseConfig>>;
  /** A client on its own connection, to stand for a process that may crash. */
  newClient(): Promise<{ client: LeaseClient; nc: NatsConnection }>;
  events(caseId: string): Promise<RecordedEvent[]>;
  cleanup(): Promise<void>;
}

export async function startLeaseHarness(
  o: { skewMs?: number; sweepIntervalMs?: number; claimMs?: number; servers?: string } = {},
): Promise<LeaseHarness> {
  const servers = o.servers ?? NATS_URL;
  const namespace = uniqueSuffix('l');
  const stream = `T${namespace.toUpperCase()}`;
  const bucket = `L${namespace}`;
  const env = {
    CASELOOP_NAMESPACE: namespace,
    LEDGER_STREAM: stream,
    LEDGER_PROVISION: 'true',
    NATS_URL: servers,
    HTTP_PORT: '0',
    HTTP_HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    LEASE_BUCKET: bucket,
    LEASE_SKEW_MS: String(o.skewMs ?? 200),
    LEASE_SWEEP_INTERVAL_MS: String(o.sweepIntervalMs ?? 50),
    LEASE_CLAIM_MS: String(o.claimMs ?? 5_000),
  };
  const boot = () =>
    bootstrapService({
      name: 'lease',
      config: leaseConfig,
      module: (c) => LeaseModule.forRoot(c),
      consumer: false,
      env,
    });
  const service = await boot();
  const replicas: RunningService<LeaseConfig>[] = [];
  const opened: NatsConnection[] = [];
  const newClient = async () => {
    const nc = await connect({ servers, noAsyncTraces: true });
    opened.push(nc);
    return { nc, client: await LeaseClient.connect(nc, { namespace, bucket }) };
  };
  const first = await newClient();
  const reader = await connectLedger({ servers, namespace, stream, name: 'lease-test-reader' });
  return {
    namespace,
    stream,
    bucket,
    service,
    clientNc: first.nc,
    client: first.client,
    reader,
    newClient,
    async replica() {
      const r = await boot();
      replicas.push(r);
      return r;
    },
    events: async (caseId) => (await reader.store.load('case', caseId)).events,
    async cleanup() {
      await service.close();
      for (const r of replicas) await r.close();
      for (const nc of opened) if (!nc.isClosed()) await nc.close();
      for (const name of [stream, `${stream}_DLQ`, `KV_${bucket}`])
        await reader.jsm.streams.delete(name).catch(() => undefined);
      await reader.close();
    },
  };
}
