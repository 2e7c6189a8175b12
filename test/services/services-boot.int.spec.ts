import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultSeed, LocalDiscord } from '@caseloop/discord-sandbox';
import { connectLedger } from '@caseloop/ledger';
import { NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { connect } from 'nats';
import { Client } from 'pg';
import { ServiceProcess, SERVICES, startService } from './service-processes';

jest.setTimeout(180_000);

describe('every service as its own process', () => {
  const namespace = uniqueSuffix();
  const stream = `T${namespace.toUpperCase()}`;
  const started: ServiceProcess[] = [];
  let dir = '';
  let discord: LocalDiscord | null = null;
  const monitorSchema = uniqueSuffix('boot');
  const leaseBucket = `${namespace}-leases`;
  /** What each service needs beyond the platform keys to boot (placeholders: nothing is called at boot). */
  const extra: Record<string, Record<string, string>> = {};

  const secretFile = async (name: string, value: string) => {
    const file = join(dir, name);
    await writeFile(file, value);
    await chmod(file, 0o600);
    return file;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'caseloop-boot-'));
    const repositories = join(dir, 'repositories.yaml');
    await writeFile(
      repositories,
      'repositories:\n  - id: shop\n    url: https://git.example.com/shop.git\n    targetBranch: main\n    checks:\n      - { name: focused, kind: focused_test, command: ["true"], timeoutMs: 1000 }\n',
    );
    for (const d of ['worktrees', 'artifacts', 'work']) await mkdir(join(dir, d));
    const routes = join(dir, 'routes.yaml');
    await writeFile(routes, 'normal:\n  name: scripted\n  timeoutMs: 10000\n  runtime:\n    kind: scripted\n    steps: []\n');
    // Intake connects to Discord at start: a local one, bound to its bugs channel.
    discord = await LocalDiscord.start(defaultSeed());
    const binding = join(dir, 'binding.json');
    await writeFile(
      binding,
      JSON.stringify({
        guildId: discord.guildId,
        channels: [{ id: discord.channelId('bugs'), mode: 'open' }],
        reporters: [discord.userId('alice')],
        reporterRoles: [],
        reviewers: [discord.userId('rita')],
        limits: { inboundMaxChars: 2000, reportsPerDayPerUser: 50, replyChunkSize: 2000 },
      }),
    );
    extra.intake = {
      INTAKE_BINDING_FILE: binding,
      INTAKE_DISCORD_TOKEN_FILE: await secretFile('discord-token', discord.token),
      INTAKE_DISCORD_API_URL: discord.apiUrl,
      INTAKE_FAST_IDENTIFY: 'true',
    };
    extra.lease = { LEASE_BUCKET: leaseBucket };
    extra.worker = {
      WORKER_REPOSITORIES_FILE: repositories,
      WORKER_ROUTES_FILE: routes,
      WORKER_DIR: join(dir, 'work'),
      WORKER_ARTIFACTS_DIR: join(dir, 'artifacts'),
    };
    extra.monitor = {
      CASELOOP_DATABASE_URL_FILE: await secretFile('database-url', PG_URL),
      CASELOOP_DB_SCHEMA: monitorSchema,
    };
    extra.evidence = {
      EVIDENCE_REPOSITORIES_FILE: repositories,
      EVIDENCE_WORKTREES_DIR: join(dir, 'worktrees'),
      EVIDENCE_ARTIFACTS_DIR: join(dir, 'artifacts'),
      EVIDENCE_S3_ENDPOINT: 'http://127.0.0.1:9',
      EVIDENCE_S3_BUCKET: 'caseloop-evidence',
      EVIDENCE_S3_ACCESS_KEY_ID_FILE: await secretFile('s3-key-id', 'boot-test-key'),
      EVIDENCE_S3_SECRET_ACCESS_KEY_FILE: await secretFile('s3-secret', 'boot-test-secret'),
      EVIDENCE_PUBLIC_URL: 'http://evidence.test',
      LEASE_BUCKET: leaseBucket,
    };
    const ledger = await connectLedger({ servers: NATS_URL, namespace, stream, name: 'provisioner' });
    await ledger.provision();
    await ledger.close();
  });
  afterAll(async () => {
    for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    const nc = await connect({ servers: NATS_URL });
    const jsm = await nc.jetstreamManager();
    for (const s of [stream, `${stream}_DLQ`, `KV_${leaseBucket}`]) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
    await discord?.close();
    const pg = new Client({ connectionString: PG_URL });
    await pg.connect();
    await pg.query(`drop schema if exists "${monitorSchema}" cascade`);
    await pg.end();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(SERVICES)('%s boots, reports ready on /healthz, and exits 0 on SIGTERM', async (name) => {
    const svc = await startService(name, { NATS_URL, CASELOOP_NAMESPACE: namespace, LEDGER_STREAM: stream, ...extra[name] });
    started.push(svc);
    const res = await fetch(`${svc.url}/healthz`);
    const body = (await res.json()) as { service: string; status: string; nats: { state: string }; transport: { state: string; consumer: string } };
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ service: name, status: 'ready', nats: { state: 'connected' } });
    // A service that reacts to ledger events consumes with its own durable; others declare consumer: false.
    const consuming = body.transport.state !== 'disabled';
    expect(body.transport).toEqual(consuming ? { state: 'consuming', consumer: name } : { state: 'disabled', consumer: null });
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toContain(`process_cpu_user_seconds_total{service="${name}"}`);
    if (consuming) expect(metrics).toContain(`caseloop_consumer_ready{service="${name}"} 1`);

    svc.child.kill('SIGTERM');
    const exit = await svc.exit;
    expect({ ...exit, output: exit.code === 0 ? '' : svc.output().slice(-2000) }).toEqual({ code: 0, signal: null, output: '' });
    expect(svc.output()).toContain('"msg":"stopped"');
  });

  it('refuses to start with bad configuration, naming the key and not the value', async () => {
    const err = await startService('monitor', { NATS_URL, CASELOOP_NAMESPACE: 'not.safe', HTTP_PORT: 'secret-looking-value' }).catch(
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toContain('monitor exited 1: monitor: invalid configuration: CASELOOP_NAMESPACE: has an invalid format; HTTP_PORT: expected number');
    expect(message).not.toContain('secret-looking-value');
    expect(message).not.toContain('not.safe');
  });
});
