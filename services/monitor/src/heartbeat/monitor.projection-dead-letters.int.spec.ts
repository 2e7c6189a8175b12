import { draft, encodeEvent, RecordedEvent } from '@caseloop/contracts';
import { Ledger } from '@caseloop/ledger';
import { bootstrapService, RunningService } from '@caseloop/platform';
import {
  caseViewProjection,
  createProjectionDataSource,
  listProjectionDeadLetters,
  migrateProjections,
  ProjectionCatalog,
  redriveProjectionDeadLetter,
} from '@caseloop/projections';
import { eventually, NATS_URL, PG_URL } from '@caseloop/testing';
import { connect } from 'nats';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { testLedger, TestLedger } from '../../../../libs/ledger/test/ledger.fixture';
import { publishRaw } from '../../../../libs/projections/src/testing/publish-history';
import { monitorConfig, MonitorConfig } from '../monitor.config';
import { MonitorModule } from '../monitor.module';
import { ProjectionHostLifecycle } from '../projections/projection-host.lifecycle';
import { LiveCasesReader } from './live-cases.reader';
import {
  HEARTBEAT_OPTIONS,
  MONITOR_LOGGER,
  MonitorHeartbeat,
  OPS_FINDINGS_AGGREGATE_ID,
} from './monitor.heartbeat';
import { ProjectionDeadLettersReader } from './projection-dead-letters.reader';

jest.setTimeout(120_000);

const now = new Date('2026-11-29T12:00:00.000Z');
const minuteAgo = new Date(now.getTime() - 60_000).toISOString();
const CASE = 'CPDL';

const opened = (title: string) =>
  draft('CaseOpened', {
    sourceId: `discord-${CASE}`,
    place: { guildId: '100', channelId: '200', threadId: null, messageId: '300' },
    reporterId: '400',
    title,
    confidence: 1,
    reasons: [],
  });

/** A well-formed WorktreePrepared on the case, written at a version no reader knows yet. */
function fromTheFuture(namespace: string): { subject: string; body: string } {
  const enc = encodeEvent(namespace, {
    eventId: 'future-1:0',
    type: 'WorktreePrepared',
    version: 1,
    aggregate: 'case',
    aggregateId: CASE,
    producer: 'worker',
    commandId: 'future-1',
    causationId: null,
    correlationId: CASE,
    occurredAt: minuteAgo,
    data: {
      taskId: 'T1',
      worktree: CASE,
      branch: `caseloop/${CASE}`,
      baseRevision: 'a'.repeat(40),
      reused: false,
    },
  });
  const body = JSON.parse(new TextDecoder().decode(enc.body)) as Record<string, unknown>;
  return { subject: enc.subject, body: JSON.stringify({ ...body, version: 7 }) };
}

describe('the monitor heartbeat over the projections’ dead letters', () => {
  let t: TestLedger;
  let ds: DataSource;
  let svc: RunningService<MonitorConfig>;
  let heartbeat: MonitorHeartbeat;
  let ns: string;

  /** The findings on a case without poison messages of its own. */
  const caseFindings = async (ledger: Ledger, caseId: string) =>
    (await ledger.store.load('case', caseId)).events.flatMap((e) =>
      e.type === 'FindingRecorded' ? [e.data] : [],
    );
  /** The case's findings, read from the monitor's own subject (the case itself holds poison messages). */
  const found = async (caseId = CASE) => {
    const all: RecordedEvent[] = [];
    const filter = `${ns}.case.${caseId}.monitor`;
    const jsm = t.ledger.jsm as unknown as {
      direct: { getMessage(s: string, q: object): Promise<{ seq: number; json<T>(): T }> };
    };
    for (let from = 1; ;) {
      const m = await jsm.direct.getMessage(t.stream, { seq: from, next_by_subj: filter }).catch(() => null);
      if (!m) break;
      all.push({ ...m.json<RecordedEvent>(), seq: m.seq });
      from = m.seq + 1;
    }
    return all.flatMap((e) => (e.type === 'FindingRecorded' ? [{ ...e.data }] : []));
  };
  const opsFindings = async () =>
    (await t.ledger.store.load('ops', OPS_FINDINGS_AGGREGATE_ID)).events.flatMap((e) =>
      e.type === 'OpsFindingRecorded' ? [e.data] : [],
    );
  const counted = async () => {
    const metric = await svc.app.get(Registry).getSingleMetric('caseloop_monitor_findings_total')?.get();
    return metric?.values.find((v) => v.labels.kind === 'dead_letter')?.value ?? 0;
  };

  /** The hosted live runner has applied (or dead-lettered) everything in the stream. */
  async function project(): Promise<void> {
    const host = svc.app.get(ProjectionHostLifecycle);
    const last = (await t.ledger.jsm.streams.info(t.stream)).state.last_seq;
    await eventually(
      () => host.status().length > 0 && host.status().every((r) => (r.checkpoint ?? 0) >= last),
      { timeoutMs: 30_000, what: `projection checkpoint >= ${last}` },
    );
  }

  /** Direct gets on the ledger stream (every read of the heartbeat's) while `fn` runs, counted by a listener on the API subject. */
  async function ledgerReads<T>(fn: () => Promise<T>): Promise<{ summary: T; directGets: number }> {
    const nc = await connect({ servers: NATS_URL });
    let directGets = 0;
    nc.subscribe(`$JS.API.DIRECT.GET.${t.stream}`, { callback: () => directGets++ });
    nc.subscribe(`$JS.API.DIRECT.GET.${t.stream}.>`, { callback: () => directGets++ });
    await nc.flush();
    try {
      // The listener must see reads: one of the test's own first.
      await t.ledger.store.lastSeqOf('case', CASE, 'monitor');
      await eventually(() => directGets > 0, { what: 'the listener sees direct gets' });
      directGets = 0;
      const summary = await fn();
      await nc.flush();
      return { summary, directGets };
    } finally {
      await nc.close();
    }
  }

  const restartedHeartbeat = () =>
    new MonitorHeartbeat(
      t.ledger,
      svc.app.get(LiveCasesReader),
      svc.app.get(ProjectionDeadLettersReader),
      svc.app.get(HEARTBEAT_OPTIONS),
      svc.app.get(MONITOR_LOGGER),
      new Registry(),
    );

  beforeAll(async () => {
    t = await testLedger('monitor');
    ns = t.namespace;
    ds = await createProjectionDataSource({ url: PG_URL, schema: ns }).initialize();
    await migrateProjections(ds);
    svc = await bootstrapService({
      name: 'monitor',
      config: monitorConfig,
      module: (c) => MonitorModule.forRoot(c),
      consumer: false,
      env: {
        NATS_URL: 'nats://127.0.0.1:4222',
        CASELOOP_NAMESPACE: ns,
        LEDGER_STREAM: t.stream,
        CASELOOP_DATABASE_URL: PG_URL,
        CASELOOP_DB_SCHEMA: ns,
        MONITOR_HEARTBEAT_MS: '0',
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: '0',
        LOG_LEVEL: 'silent',
      },
    });
    heartbeat = svc.app.get(MonitorHeartbeat);
  });

  afterAll(async () => {
    await svc?.close();
    await ds?.query(`drop schema if exists "${ns}" cascade`);
    await ds?.destroy();
    await t?.cleanup();
  });

  let poisonA: number;

  it('records one finding for the monitor on the case whose subject carried a message the projection dead-lettered', async () => {
    await t.ledger.store.append({
      aggregate: 'case',
      aggregateId: CASE,
      producer: 'coordinator',
      events: [opened('a live case')],
      commandId: 'open-1',
      causationId: null,
      correlationId: CASE,
      occurredAt: minuteAgo,
    });
    poisonA = await publishRaw(t.ledger.nc, `${ns}.case.${CASE}.coordinator`, 'not json, hunter2');
    await project();
    expect((await listProjectionDeadLetters(ds)).map((d) => [d.seq, d.code])).toEqual([
      [poisonA, 'malformed_json'],
    ]);

    // The case is read despite the message on its subject that does not decode.
    expect(await heartbeat.beat(now)).toMatchObject({
      live: 1,
      deepRead: 1,
      findings: 1,
      projectionDeadLetters: 1,
    });
    const [finding, ...rest] = await found();
    expect(rest).toEqual([]);
    expect(finding).toEqual({
      findingId: `finding-${CASE}-dead_letter-${poisonA}-projection-case-view-v1`,
      kind: 'dead_letter',
      owner: 'monitor',
      observedSeq: poisonA,
      detail: expect.stringContaining(
        `projection case-view v1 could not apply stream seq ${poisonA} (${ns}.case.${CASE}.coordinator): malformed_json: `,
      ),
    });
    expect(finding?.detail).toContain(`caseloop dead-letters --redrive ${poisonA}`);
    expect(finding?.detail).toContain('caseloop rebuild case-view');
    // The decoder's reason quotes the body; the finding does not.
    expect(finding?.detail).not.toContain('hunter2');
    expect(await counted()).toBe(1);
  });

  it('records nothing more at the next beats, its own finding on the case included', async () => {
    await project();
    expect(await heartbeat.beat(now)).toMatchObject({ findings: 0, projectionDeadLetters: 0 });
    // A quiet beat reads no letter it has handled, so it reads nothing from the ledger at all.
    const reads = await ledgerReads(() => heartbeat.beat(now));
    expect(reads.summary).toMatchObject({ deepRead: 0, findings: 0 });
    expect(reads.directGets).toBe(0);
    expect(await found()).toHaveLength(1);
    expect(await counted()).toBe(1);
  });

  it('does not record it again after a restart, which reads the open letters anew', async () => {
    const restarted = restartedHeartbeat();
    expect(await restarted.beat(now)).toMatchObject({ findings: 0, projectionDeadLetters: 0 });
    expect(await restarted.beat(now)).toMatchObject({ findings: 0 });
    expect(await found()).toHaveLength(1);
  });

  it('records a second letter added later once, at the next beat of either heartbeat', async () => {
    const future = fromTheFuture(ns);
    const poisonB = await publishRaw(t.ledger.nc, future.subject, future.body);
    await project();
    expect((await listProjectionDeadLetters(ds)).map((d) => [d.seq, d.code])).toEqual([
      [poisonA, 'malformed_json'],
      [poisonB, 'unknown_event_version'],
    ]);

    const restarted = restartedHeartbeat();
    expect(await heartbeat.beat(now)).toMatchObject({ findings: 1, projectionDeadLetters: 1 });
    expect(await restarted.beat(now)).toMatchObject({ findings: 0, projectionDeadLetters: 0 });
    expect(await heartbeat.beat(now)).toMatchObject({ findings: 0 });
    expect((await found()).map((f) => [f.owner, f.observedSeq])).toEqual([
      ['monitor', poisonA],
      ['monitor', poisonB],
    ]);
    expect((await found())[1]?.detail).toMatch(
      new RegExp(
        `stream seq ${poisonB} \\(${ns}\\.case\\.${CASE}\\.worker\\): unknown_event_version: .*WorktreePrepared v7 is newer than this reader`,
      ),
    );
    expect(await counted()).toBe(2);
  });

  it('records a letter off a case subject on the ops aggregate, once', async () => {
    const poisonC = await publishRaw(t.ledger.nc, `${ns}.source.discord-77.intake`, '{"half": ');
    await project();

    expect(await heartbeat.beat(now)).toMatchObject({ findings: 1, projectionDeadLetters: 1 });
    expect(await heartbeat.beat(now)).toMatchObject({ findings: 0 });
    expect(await restartedHeartbeat().beat(now)).toMatchObject({ findings: 0 });
    expect(await opsFindings()).toEqual([
      expect.objectContaining({
        findingId: `finding-ops-dead_letter-${poisonC}-projection-case-view-v1`,
        kind: 'dead_letter',
        owner: 'monitor',
        observedSeq: poisonC,
        detail: expect.stringMatching(
          new RegExp(
            `^projection case-view v1 could not apply stream seq ${poisonC} \\(${ns}\\.source\\.discord-77\\.intake\\): malformed_json`,
          ),
        ),
      }),
    ]);
    expect(await found()).toHaveLength(2);
  });

  it('does not report a letter re-driven before a beat saw it', async () => {
    // Letters an older reader left on two events this one reads (as libs/projections' own re-drive
    // tests do): the operator upgraded and re-drove one of them before the monitor looked.
    const seqs = await Promise.all(
      ['CREDRIVEN', 'COPEN'].map(async (id) => {
        const {
          seqs: [seq],
        } = await t.ledger.store.append({
          aggregate: 'case',
          aggregateId: id,
          producer: 'coordinator',
          events: [opened(`case ${id}`)],
          commandId: `open-${id}`,
          causationId: null,
          correlationId: id,
          occurredAt: minuteAgo,
        });
        return seq as number;
      }),
    );
    await project();
    const catalog = new ProjectionCatalog(ds);
    for (const seq of seqs) {
      await ds.query(
        `insert into ${catalog.t('projection_dead_letters')} (projection, version, seq, subject, code, error)
         values ('case-view', 1, $1, (select subject from ${catalog.t('timeline')} where seq = $1), 'unknown_event_version', 'too new')`,
        [seq],
      );
    }
    await redriveProjectionDeadLetter(
      { dataSource: ds, nc: t.ledger.nc, stream: t.stream },
      caseViewProjection,
      seqs[0] as number,
    );

    expect(await heartbeat.beat(now)).toMatchObject({ projectionDeadLetters: 1 });
    expect(await caseFindings(t.ledger, 'COPEN')).toEqual([
      expect.objectContaining({ kind: 'dead_letter', owner: 'monitor', observedSeq: seqs[1] }),
    ]);
    expect(await caseFindings(t.ledger, 'CREDRIVEN')).toEqual([]);
    expect(await restartedHeartbeat().beat(now)).toMatchObject({ projectionDeadLetters: 0 });
  });
});
