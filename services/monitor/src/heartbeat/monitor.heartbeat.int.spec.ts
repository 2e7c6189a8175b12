import { draft, EventDraft, RecordedEvent } from '@caseloop/contracts';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { createProjectionDataSource, migrateProjections } from '@caseloop/projections';
import { eventually, PG_URL } from '@caseloop/testing';
import { ProjectionHostLifecycle } from '../projections/projection-host.lifecycle';
import { DataSource } from 'typeorm';
import { testLedger, TestLedger } from '../../../../libs/ledger/test/ledger.fixture';
import { monitorConfig, MonitorConfig } from '../monitor.config';
import { MonitorModule } from '../monitor.module';
import { IMPROVEMENTS_AGGREGATE_ID, MonitorHeartbeat } from './monitor.heartbeat';

jest.setTimeout(90_000);

const REV = 'a'.repeat(40);
const place = (m: string) => ({ guildId: '100', channelId: '200', threadId: null, messageId: m });
const HOUR = 3_600_000;
const now = new Date('2026-11-29T12:00:00.000Z');
const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();

let t: TestLedger;
let ds: DataSource;
let svc: RunningService<MonitorConfig>;
let heartbeat: MonitorHeartbeat;

async function append(
  caseId: string,
  producer: RecordedEvent['producer'],
  n: number,
  at: string,
  ...events: EventDraft[]
) {
  await t.ledger.store.append({
    aggregate: 'case',
    aggregateId: caseId,
    producer,
    events,
    commandId: `${caseId}-${producer}-${n}`,
    causationId: null,
    correlationId: caseId,
    occurredAt: at,
  });
}

const opened = (caseId: string, m: string) =>
  draft('CaseOpened', {
    sourceId: `discord-${m}`,
    place: place(m),
    reporterId: '300',
    title: `case ${caseId}`,
    confidence: 1,
    reasons: [],
  });
const assigned = draft('TaskAssigned', {
  taskId: 'T1',
  repository: 'shop',
  targetBranch: 'main',
  targetRevision: REV,
  brief: 'fix it',
});
const intended = (m: string) =>
  draft('DeliveryIntended', {
    deliveryId: `D${m}`,
    chunkIndex: 0,
    sourceId: `discord-${m}`,
    chunkCount: 1,
    nonce: `n${m}`,
    channelId: '200',
    threadId: null,
    contentSha256: 'c'.repeat(64),
    length: 12,
    intendedAt: ago(20 * 60_000),
  });

/** The monitor hosts the live projection runners: wait until they have applied everything appended. */
async function project() {
  const host = svc.app.get(ProjectionHostLifecycle);
  const last = (await t.ledger.jsm.streams.info(t.stream)).state.last_seq;
  await eventually(
    () => host.status().length > 0 && host.status().every((r) => (r.checkpoint ?? 0) >= last),
    {
      timeoutMs: 30_000,
      what: `projection checkpoint >= ${last}`,
    },
  );
}

async function findings(caseId: string) {
  const { events } = await t.ledger.store.load('case', caseId);
  return events
    .filter((e) => e.type === 'FindingRecorded')
    .map((e) => (e.type === 'FindingRecorded' ? e.data : null));
}

beforeAll(async () => {
  t = await testLedger('monitor');
  ds = await createProjectionDataSource({ url: PG_URL, schema: t.namespace }).initialize();
  await migrateProjections(ds);
  svc = await bootstrapService({
    name: 'monitor',
    config: monitorConfig,
    module: (c) => MonitorModule.forRoot(c),
    consumer: false,
    env: {
      NATS_URL: 'nats://127.0.0.1:4222',
      CASELOOP_NAMESPACE: t.namespace,
      LEDGER_STREAM: t.stream,
      CASELOOP_DATABASE_URL: PG_URL,
      CASELOOP_DB_SCHEMA: t.namespace,
      MONITOR_HEARTBEAT_MS: '0',
      MONITOR_CANDIDATE_MIN_CASES: '2',
      MONITOR_BUDGET_TRIAGE_MS: String(2 * HOUR),
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      LOG_LEVEL: 'silent',
    },
  });
  heartbeat = svc.app.get(MonitorHeartbeat);
});

afterAll(async () => {
  await svc?.close();
  await ds?.query(`drop schema if exists "${t.namespace}" cascade`);
  await ds?.destroy();
  await t?.cleanup();
});

describe('the monitor heartbeat on a real ledger and projection', () => {
  it('records findings for the owner, stays quiet when nothing changed, and raises a recurring gap once', async () => {
    await append('CSTALLED', 'coordinator', 1, ago(3 * HOUR), opened('CSTALLED', '11'), assigned);
    await append('CFRESH', 'coordinator', 1, ago(60_000), opened('CFRESH', '12'), assigned);
    await append('CSTUCK1', 'coordinator', 1, ago(30 * 60_000), opened('CSTUCK1', '13'));
    await append('CSTUCK1', 'intake', 1, ago(20 * 60_000), intended('13'));
    await append('CSTUCK2', 'coordinator', 1, ago(30 * 60_000), opened('CSTUCK2', '14'));
    await append('CSTUCK2', 'intake', 1, ago(20 * 60_000), intended('14'));
    await project();

    const first = await heartbeat.beat(now);
    expect(first).toMatchObject({ live: 4, deepRead: 4 });

    expect(await findings('CSTALLED')).toEqual([
      expect.objectContaining({ kind: 'no_progress', owner: 'worker' }),
    ]);
    expect(await findings('CFRESH')).toEqual([]);
    expect(await findings('CSTUCK1')).toEqual([
      expect.objectContaining({ kind: 'delivery_stuck', owner: 'intake' }),
    ]);

    const improvements = await t.ledger.store.load('ops', IMPROVEMENTS_AGGREGATE_ID);
    expect(improvements.events.map((e) => e.type === 'ImprovementCandidateRecorded' && e.data)).toEqual([
      expect.objectContaining({ kind: 'delivery_stuck', caseIds: ['CSTUCK1', 'CSTUCK2'] }),
    ]);

    // The findings themselves changed the cases; the next look must not repeat them.
    await project();
    const second = await heartbeat.beat(now);
    expect(second.findings).toBe(0);
    expect(second.candidates).toBe(0);
    expect(await findings('CSTALLED')).toHaveLength(1);

    // A quiet live set is not read at all.
    const third = await heartbeat.beat(now);
    expect(third).toMatchObject({ deepRead: 0, findings: 0 });
  });

  it('reads a case again when it changes and stays quiet when the change closed the gap', async () => {
    await append(
      'CSTUCK1',
      'intake',
      2,
      now.toISOString(),
      draft('DeliveryConfirmed', {
        deliveryId: 'D13',
        chunkIndex: 0,
        sourceId: 'discord-13',
        discordMessageId: '999',
        channelId: '200',
        threadId: null,
        reconciled: false,
      }),
    );
    await project();
    const beat = await heartbeat.beat(now);
    expect(beat).toMatchObject({ deepRead: 1, findings: 0 });
  });

  it('re-reads an unchanged case when its step budget runs out', async () => {
    await append(
      'CFRESH',
      'worker',
      1,
      ago(60_000),
      draft('WorktreePrepared', {
        taskId: 'T1',
        worktree: 'CFRESH',
        branch: 'caseloop/CFRESH',
        baseRevision: REV,
        reused: false,
      }),
    );
    await project();
    expect(await heartbeat.beat(now)).toMatchObject({ deepRead: 1, findings: 0 });
    const later = new Date(now.getTime() + 3 * HOUR);
    const beat = await heartbeat.beat(later);
    expect(beat.findings).toBeGreaterThanOrEqual(1);
    expect(await findings('CFRESH')).toEqual([
      expect.objectContaining({ kind: 'no_progress', owner: 'worker' }),
    ]);
  });
});
