import { draft, Producer, RecordedEvent } from '@caseloop/contracts';
import {
  connectLedger,
  JetStreamExceptionFilter,
  JetStreamServer,
  Ledger,
  listConsumerDeadLetters,
  PoisonError,
} from '@caseloop/ledger';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { createProjectionDataSource, migrateProjections } from '@caseloop/projections';
import { eventually, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, Payload } from '@nestjs/microservices';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { RestrictedNats, startRestrictedNats } from '../../../../deploy/nats/restricted-nats.fixture';
import { testLedger, TestLedger } from '../../../../libs/ledger/test/ledger.fixture';
import { monitorConfig, MonitorConfig } from '../monitor.config';
import { MonitorModule } from '../monitor.module';
import { ProjectionHostLifecycle } from '../projections/projection-host.lifecycle';
import { LiveCasesReader } from './live-cases.reader';
import { ProjectionDeadLettersReader } from './projection-dead-letters.reader';
import { HEARTBEAT_OPTIONS, MONITOR_LOGGER, MonitorHeartbeat } from './monitor.heartbeat';

jest.setTimeout(120_000);

const REV = 'a'.repeat(40);
const now = new Date('2026-11-29T12:00:00.000Z');
const minuteAgo = new Date(now.getTime() - 60_000).toISOString();

const opened = (caseId: string, title: string) =>
  draft('CaseOpened', {
    sourceId: `discord-${caseId}`,
    place: { guildId: '100', channelId: '200', threadId: null, messageId: '300' },
    reporterId: '400',
    title,
    confidence: 1,
    reasons: [],
  });
const assigned = (brief: string) =>
  draft('TaskAssigned', {
    taskId: 'T1',
    repository: 'shop',
    targetBranch: 'main',
    targetRevision: REV,
    brief,
  });

/**
 * A real service consumer (the ledger's JetStream transport under its own durable) that cannot handle
 * a case opened, or a task assigned, whose text starts with "poison": it dead-letters them, writing
 * its own record and, by `term`, the server's MSG_TERMINATED advisory for the same message.
 */
async function startPoisonedConsumer(ledger: Ledger, durable: Producer): Promise<INestMicroservice> {
  const refuse = (what: string) => {
    if (what.startsWith('poison')) throw new PoisonError(`${durable} cannot handle "${what}"`);
  };
  @Controller()
  class PoisonedReactor {
    @EventPattern('CaseOpened')
    async onOpened(@Payload() e: RecordedEvent): Promise<void> {
      if (e.type === 'CaseOpened') refuse(e.data.title);
    }
    @EventPattern('TaskAssigned')
    async onAssigned(@Payload() e: RecordedEvent): Promise<void> {
      if (e.type === 'TaskAssigned') refuse(e.data.brief);
    }
  }
  @Module({ controllers: [PoisonedReactor] })
  class PoisonedModule {}
  const server = new JetStreamServer({
    ledger,
    producer: durable,
    durable,
    setupRetryMs: 200,
    drainTimeoutMs: 2_000,
  });
  const app = await NestFactory.createMicroservice(PoisonedModule, { strategy: server, logger: false });
  app.useGlobalFilters(new JetStreamExceptionFilter());
  await app.listen();
  await eventually(() => server.state === 'consuming', { what: `${durable} consumer running` });
  return app;
}

/** Both copies of one dead letter are in the dead-letter stream: the consumer's record and the server's advisory. */
async function deadLettered(ledger: Ledger, seq: number, consumer: string): Promise<void> {
  await eventually(
    async () => {
      const of = (await listConsumerDeadLetters(ledger.jsm, ledger.stream)).filter(
        (d) => d.streamSeq === seq && d.consumer === consumer,
      );
      return of.some((d) => d.source === 'record') && of.some((d) => d.source === 'terminated');
    },
    { timeoutMs: 20_000, what: `seq ${seq} dead-lettered by ${consumer} (record and advisory)` },
  );
}

async function appendCase(
  ledger: Ledger,
  caseId: string,
  commandId: string,
  ...events: ReturnType<typeof opened | typeof assigned>[]
): Promise<number[]> {
  const { seqs } = await ledger.store.append({
    aggregate: 'case',
    aggregateId: caseId,
    producer: 'coordinator',
    events,
    commandId,
    causationId: null,
    correlationId: caseId,
    occurredAt: minuteAgo,
  });
  return seqs;
}

async function deadLetterFindings(ledger: Ledger, caseId: string) {
  const { events } = await ledger.store.load('case', caseId);
  return events.flatMap((e) => (e.type === 'FindingRecorded' ? [e.data] : []));
}

/** The monitor hosts the live projection runners: wait until they have applied everything appended. */
async function project(svc: RunningService<MonitorConfig>, ledger: Ledger): Promise<void> {
  const host = svc.app.get(ProjectionHostLifecycle);
  const last = (await ledger.jsm.streams.info(ledger.stream)).state.last_seq;
  await eventually(
    () => host.status().length > 0 && host.status().every((r) => (r.checkpoint ?? 0) >= last),
    { timeoutMs: 30_000, what: `projection checkpoint >= ${last}` },
  );
}

async function startMonitor(o: {
  url: string;
  namespace: string;
  stream: string;
  schema: string;
  user?: { name: string; password: string };
}): Promise<RunningService<MonitorConfig>> {
  return bootstrapService({
    name: 'monitor',
    config: monitorConfig,
    module: (c) => MonitorModule.forRoot(c),
    consumer: false,
    env: {
      NATS_URL: o.url,
      ...(o.user ? { NATS_USER: o.user.name, NATS_PASSWORD: o.user.password } : {}),
      CASELOOP_NAMESPACE: o.namespace,
      LEDGER_STREAM: o.stream,
      CASELOOP_DATABASE_URL: PG_URL,
      CASELOOP_DB_SCHEMA: o.schema,
      MONITOR_HEARTBEAT_MS: '0',
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      LOG_LEVEL: 'silent',
    },
  });
}

describe('the monitor heartbeat over the ledger dead-letter stream', () => {
  let t: TestLedger;
  let ds: DataSource;
  let svc: RunningService<MonitorConfig>;
  let heartbeat: MonitorHeartbeat;
  const consumers: INestMicroservice[] = [];
  const found = (caseId: string) => deadLetterFindings(t.ledger, caseId);

  beforeAll(async () => {
    t = await testLedger('monitor');
    ds = await createProjectionDataSource({ url: PG_URL, schema: t.namespace }).initialize();
    await migrateProjections(ds);
    svc = await startMonitor({
      url: 'nats://127.0.0.1:4222',
      namespace: t.namespace,
      stream: t.stream,
      schema: t.namespace,
    });
    heartbeat = svc.app.get(MonitorHeartbeat);
    consumers.push(await startPoisonedConsumer(t.ledger, 'evidence'));
  });

  afterAll(async () => {
    for (const c of consumers) await c.close();
    await svc?.close();
    await ds?.query(`drop schema if exists "${t.namespace}" cascade`);
    await ds?.destroy();
    await t?.cleanup();
  });

  let poisonA: number;
  let poisonB: number;

  it('records one finding for a new dead letter, addressed to the consumer’s service', async () => {
    [poisonA] = (await appendCase(t.ledger, 'CDLA', 'a-1', opened('CDLA', 'poison report A'))) as [number];
    await appendCase(t.ledger, 'CQUIET', 'q-1', opened('CQUIET', 'an ordinary report'));
    await deadLettered(t.ledger, poisonA, 'evidence');
    await project(svc, t.ledger);

    const beat = await heartbeat.beat(now);
    // The record and the advisory are two messages in the dead-letter stream but one dead letter.
    expect(beat).toMatchObject({ live: 2, findings: 1 });
    expect(await found('CDLA')).toEqual([
      expect.objectContaining({
        kind: 'dead_letter',
        owner: 'evidence',
        observedSeq: poisonA,
        detail: expect.stringMatching(
          new RegExp(`^stream seq ${poisonA} dead-lettered by evidence: .*poison report A`),
        ),
      }),
    ]);
    expect(await found('CQUIET')).toEqual([]);
  });

  it('reports nothing new at the next beats when no letter was added', async () => {
    await project(svc, t.ledger);
    expect(await heartbeat.beat(now)).toMatchObject({ findings: 0 });
    expect(await heartbeat.beat(now)).toMatchObject({ deepRead: 0, findings: 0 });
    expect(await found('CDLA')).toHaveLength(1);
  });

  it('reports a letter added later at the next beat, once', async () => {
    [poisonB] = (await appendCase(t.ledger, 'CDLB', 'b-1', opened('CDLB', 'poison report B'))) as [number];
    await deadLettered(t.ledger, poisonB, 'evidence');
    await project(svc, t.ledger);

    expect(await heartbeat.beat(now)).toMatchObject({ findings: 1 });
    expect(await found('CDLB')).toEqual([
      expect.objectContaining({ kind: 'dead_letter', owner: 'evidence', observedSeq: poisonB }),
    ]);
    expect(await found('CDLA')).toHaveLength(1);
    expect(await heartbeat.beat(now)).toMatchObject({ deepRead: 0, findings: 0 });
  });

  it('reports a later letter on a case that has not changed since its first one', async () => {
    // Another service fails on the same messages: new dead letters, the cases themselves untouched.
    consumers.push(await startPoisonedConsumer(t.ledger, 'worker'));
    await deadLettered(t.ledger, poisonA, 'worker');
    await deadLettered(t.ledger, poisonB, 'worker');

    expect(await heartbeat.beat(now)).toMatchObject({ deepRead: 2, findings: 2 });
    for (const [caseId, seq] of [
      ['CDLA', poisonA],
      ['CDLB', poisonB],
    ] as const) {
      const all = await found(caseId);
      expect(all.map((f) => [f.kind, f.owner, f.observedSeq])).toEqual([
        ['dead_letter', 'evidence', seq],
        ['dead_letter', 'worker', seq],
      ]);
    }
    expect(await heartbeat.beat(now)).toMatchObject({ deepRead: 0, findings: 0 });
  });

  it('records each of two letters on one case found in the same beat', async () => {
    const seqs = await appendCase(
      t.ledger,
      'CDLC',
      'c-1',
      opened('CDLC', 'poison report C'),
      assigned('poison brief C'),
    );
    for (const seq of seqs) {
      await deadLettered(t.ledger, seq, 'evidence');
      await deadLettered(t.ledger, seq, 'worker');
    }
    await project(svc, t.ledger);

    expect(await heartbeat.beat(now)).toMatchObject({ findings: 4 });
    const all = await found('CDLC');
    expect(all.map((f) => `${f.owner}@${f.observedSeq}`).sort()).toEqual(
      seqs.flatMap((s) => [`evidence@${s}`, `worker@${s}`]).sort(),
    );
  });

  it('does not record a letter again after a restart, when it reads the whole dead-letter stream anew', async () => {
    const before = await Promise.all(['CDLA', 'CDLB', 'CDLC'].map(found));
    const restarted = new MonitorHeartbeat(
      t.ledger,
      svc.app.get(LiveCasesReader),
      svc.app.get(ProjectionDeadLettersReader),
      svc.app.get(HEARTBEAT_OPTIONS),
      svc.app.get(MONITOR_LOGGER),
      new Registry(),
    );
    expect(await restarted.beat(now)).toMatchObject({ findings: 0 });
    expect(await Promise.all(['CDLA', 'CDLB', 'CDLC'].map(found))).toEqual(before);
  });
});

describe('the monitor heartbeat under the deployment NATS permissions', () => {
  let nats: RestrictedNats;
  let ds: DataSource;
  let svc: RunningService<MonitorConfig> | undefined;
  let consumer: INestMicroservice | undefined;
  const schema = uniqueSuffix('dlperm');
  const ledgers: Ledger[] = [];
  const as = async (user: 'provisioner' | 'audit' | 'coordinator' | 'evidence') => {
    const l = await connectLedger({
      servers: nats.url,
      namespace: 'caseloop',
      stream: 'CASE_LEDGER',
      name: user,
      user,
      pass: nats.password(user),
    });
    ledgers.push(l);
    return l;
  };

  beforeAll(async () => {
    nats = await startRestrictedNats();
    await (await as('provisioner')).provision();
    ds = await createProjectionDataSource({ url: PG_URL, schema }).initialize();
    await migrateProjections(ds);
  });

  afterAll(async () => {
    await consumer?.close();
    await svc?.close();
    for (const l of ledgers) await l.close();
    await ds?.query(`drop schema if exists "${schema}" cascade`);
    await ds?.destroy();
    await nats?.stop();
  });

  it('finds the case of a dead letter with only the reads the monitor user is granted', async () => {
    const coordinator = await as('coordinator');
    consumer = await startPoisonedConsumer(await as('evidence'), 'evidence');
    const [seq] = (await appendCase(
      coordinator,
      'CPERM',
      'perm-1',
      opened('CPERM', 'poison under permissions'),
    )) as [number];
    const audit = await as('audit');
    await deadLettered(audit, seq, 'evidence');

    svc = await startMonitor({
      url: nats.url,
      namespace: 'caseloop',
      stream: 'CASE_LEDGER',
      schema,
      user: { name: 'monitor', password: nats.password('monitor') },
    });
    await project(svc, audit);
    expect(await svc.app.get(MonitorHeartbeat).beat(now)).toMatchObject({ live: 1, findings: 1 });
    expect(await deadLetterFindings(audit, 'CPERM')).toEqual([
      expect.objectContaining({ kind: 'dead_letter', owner: 'evidence', observedSeq: seq }),
    ]);
  });
});
