import { eventually, NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { Registry } from 'prom-client';
import { connect, JetStreamManager, NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { auditCase } from './case-view/case-audit';
import { caseViewProjection } from './case-view/case-view.projection';
import { createProjectionDataSource, migrateProjections } from './data-source';
import { listProjectionDeadLetters, redriveProjectionDeadLetter } from './projection-dead-letters';
import { ProjectionCatalog } from './projection-catalog';
import { ProjectionHost } from './projection-host';
import { contextFor, ProjectionRunner, writeChanges } from './projection-runner';
import { readCaseHistory } from './case-view/case-stream';
import { isProjectionError } from './projection.errors';
import { generateHistory } from './testing/case-history.generator';
import { createTestStream, publishEvents, publishRaw } from './testing/publish-history';

jest.setTimeout(120_000);

const TABLES = ['cases', 'case_sources', 'sources', 'timeline'] as const;
const ORDER: Record<(typeof TABLES)[number], string> = {
  cases: 'case_id',
  case_sources: 'source_id',
  sources: 'source_id',
  timeline: 'seq',
};

describe('projection runner (real NATS and Postgres)', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let ds: DataSource;
  const schemas: string[] = [];
  const streams: string[] = [];

  async function setup(): Promise<{
    namespace: string;
    stream: string;
    ds: DataSource;
    catalog: ProjectionCatalog;
  }> {
    const namespace = uniqueSuffix('p');
    const stream = `T${namespace.toUpperCase()}`;
    streams.push(stream);
    schemas.push(namespace);
    await createTestStream(jsm, namespace, stream);
    const db = createProjectionDataSource({ url: PG_URL, schema: namespace, poolSize: 3 });
    await db.initialize();
    await migrateProjections(db);
    ds = db;
    return { namespace, stream, ds: db, catalog: new ProjectionCatalog(db) };
  }

  const dump = async (db: DataSource, catalog: ProjectionCatalog) => {
    const out: Record<string, unknown[]> = {};
    for (const t of TABLES) out[t] = await db.query(`select * from ${catalog.t(t)} order by ${ORDER[t]}`);
    return out;
  };

  /**
   * As if an older reader had refused one middle event of a case: no timeline row, a dead letter for
   * it, and the case folded from the events that remain. Returns that event's sequence and the others'.
   */
  async function refuseOneEvent(
    db: DataSource,
    catalog: ProjectionCatalog,
    namespace: string,
    stream: string,
    caseId: string,
  ): Promise<{ victim: number; kept: number[] }> {
    const rows: { seq: string }[] = await db.query(
      `select seq from ${catalog.t('timeline')} where case_id = $1 order by seq`,
      [caseId],
    );
    const victim = Number(rows[3]?.seq);
    await db.query(`delete from ${catalog.tableOf('timeline', 1)} where seq = $1`, [victim]);
    await db.query(`delete from ${catalog.tableOf('cases', 1)} where case_id = $1`, [caseId]);
    await db.query(
      `insert into ${catalog.t('projection_dead_letters')} (projection, version, seq, subject, code, error) values ('case-view', 1, $1, 'x', 'unknown_event_version', 'too new')`,
      [victim],
    );
    const history = await readCaseHistory(nc, stream, namespace, caseId, { withSources: false });
    const without = history.caseEvents.filter((e) => e.seq !== victim);
    await writeChanges(
      catalog,
      caseViewProjection,
      db,
      1,
      await caseViewProjection.apply(without, contextFor(catalog, db, 1)),
    );
    return { victim, kept: rows.map((r) => Number(r.seq)).filter((seq) => seq !== victim) };
  }

  const start = (
    db: DataSource,
    stream: string,
    extra: Partial<Parameters<typeof ProjectionRunner.start>[0]> = {},
  ) =>
    ProjectionRunner.start({
      dataSource: db,
      nc,
      stream,
      projection: caseViewProjection,
      batchSize: 100,
      ...extra,
    });

  const sources: DataSource[] = [];
  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
    jsm = await nc.jetstreamManager();
  });
  afterEach(() => {
    if (ds) sources.push(ds);
  });
  afterAll(async () => {
    for (const s of streams) await jsm.streams.delete(s).catch(() => undefined);
    for (const db of new Set(sources)) {
      if (!db.isInitialized) continue;
      const schema = (db.options as { schema: string }).schema;
      await db.query(`drop schema if exists "${schema}" cascade`);
      await db.destroy();
    }
    await nc.close();
  });

  it('re-applying batches already applied leaves every row as it was', async () => {
    const { namespace, stream, ds: db, catalog } = await setup();
    const { events } = generateHistory({ cases: 60, seed: 7 });
    const last = await publishEvents(nc, namespace, events);

    const runner = await start(db, stream);
    expect(await runner.catchUp()).toBe(last);
    expect(await runner.lag()).toBe(0);
    await runner.close();
    const before = await dump(db, catalog);
    expect(before.timeline).toHaveLength(events.length);
    expect(before.cases).toHaveLength(60);

    // Lose the last ~2/3 of the checkpoint: the same batches come again.
    await db.query(`update ${catalog.t('projection_checkpoints')} set seq = $1`, [Math.floor(last / 3)]);
    const again = await start(db, stream, { batchSize: 37 });
    await again.catchUp();
    await again.close();
    expect(await dump(db, catalog)).toEqual(before);
  });

  it('fences a second runner of the same projection while the first holds its lock', async () => {
    const { stream, ds: db } = await setup();
    const first = await start(db, stream);
    const second = await start(db, stream).then(
      () => 'started',
      (e: unknown) => (isProjectionError(e) ? e.code : String(e)),
    );
    expect(second).toBe('fenced');
    await first.close();
    const third = await start(db, stream);
    await third.close();
  });

  it('a batch that fails after its rows were written, before the commit, is rolled back whole and re-applied once', async () => {
    const { namespace, stream, ds: db, catalog } = await setup();
    const { events, caseIds } = generateHistory({ cases: 80, seed: 11 });
    const last = await publishEvents(nc, namespace, events);
    let commits = 0;
    const crashing = await start(db, stream, {
      batchSize: 150,
      beforeCommit: () => {
        if (++commits === 3) throw new Error('killed between apply and commit');
      },
    });
    await expect(crashing.catchUp()).rejects.toThrow('killed between apply and commit');
    expect(crashing.checkpoint).toBe(300);
    await crashing.close();
    const [{ n }] = await db.query(`select count(*)::int as n from ${catalog.t('timeline')}`);
    expect(n).toBe(300);

    const resumed = await start(db, stream, { batchSize: 150 });
    expect(resumed.checkpoint).toBe(300);
    await resumed.catchUp();
    await resumed.close();
    const [{ rows, distinct }] = await db.query(
      `select count(*)::int as rows, count(distinct seq)::int as distinct from ${catalog.t('timeline')}`,
    );
    expect([rows, distinct]).toEqual([last, last]);
    for (const caseId of caseIds.slice(0, 40)) {
      const audit = await auditCase({ dataSource: db, nc, stream, namespace }, caseId);
      expect({ caseId, drift: audit.drift }).toEqual({ caseId, drift: [] });
    }
  });

  it('refuses a stream that was recreated under the same name', async () => {
    const { namespace, stream, ds: db } = await setup();
    await publishEvents(nc, namespace, generateHistory({ cases: 5, seed: 3 }).events);
    const runner = await start(db, stream);
    await runner.catchUp();
    await runner.close();

    await jsm.streams.delete(stream);
    await createTestStream(jsm, namespace, stream);
    await publishEvents(nc, namespace, generateHistory({ cases: 8, seed: 4 }).events);
    const refused = await start(db, stream).then(
      () => 'started',
      (e: unknown) => (isProjectionError(e) ? e.message : String(e)),
    );
    expect(refused).toMatch(/^stream_recreated: .*refusing/);
  });

  it('a service host runs one runner per projection; a second replica waits on standby and takes over', async () => {
    const { namespace, stream, ds: db, catalog } = await setup();
    const { events } = generateHistory({ cases: 20, seed: 8 });
    await publishEvents(nc, namespace, events.slice(0, 100));
    const registry = new Registry();
    const first = await ProjectionHost.start({ dataSource: db, nc, stream, registry, retryMs: 100 });
    const second = await ProjectionHost.start({ dataSource: db, nc, stream, retryMs: 100 });
    const both = () => JSON.stringify([first.status(), second.status()]);
    await eventually(
      () => {
        if (first.status()[0]?.state !== 'running' || first.status()[0]?.checkpoint !== 100)
          throw new Error(both());
        return true;
      },
      { what: 'the first host caught up', timeoutMs: 30_000 },
    );
    await eventually(() => second.status()[0]?.state === 'standby', {
      what: 'the second host on standby',
      timeoutMs: 30_000,
    });
    expect(second.status()[0]?.reason).toMatch(/^fenced: /);
    expect(await registry.getSingleMetricAsString('caseloop_projection_lag_events')).toContain(
      'caseloop_projection_lag_events{projection="case-view"} 0',
    );

    await first.stop();
    expect(first.status()[0]?.state).toBe('stopped');
    await publishEvents(nc, namespace, events.slice(100));
    await eventually(
      async () => (await catalog.active(caseViewProjection.name))?.checkpoint === events.length,
      {
        timeoutMs: 30_000,
        what: 'the second host took over',
      },
    );
    expect(second.status()[0]?.state).toBe('running');
    await second.stop();
  });

  it('re-drives a dead letter that decodes now: the late event is folded into its case in order', async () => {
    const { namespace, stream, ds: db, catalog } = await setup();
    const { events, caseIds } = generateHistory({ cases: 5, seed: 12, revisionLoops: 1 });
    await publishEvents(nc, namespace, events);
    const runner = await start(db, stream);
    await runner.catchUp();
    await runner.close();

    // As if an older reader had refused one middle event of a case: no timeline row, the case folded without it.
    const caseId = caseIds[1] as string;
    const deps = { dataSource: db, nc, stream, namespace };
    const { victim, kept } = await refuseOneEvent(db, catalog, namespace, stream, caseId);
    // Without expected-sequence headers on the appends, only a scan of the case's subjects sees the gap.
    const before = await auditCase({ ...deps, scan: true }, caseId);
    expect(before.drift).toEqual(
      expect.arrayContaining([{ field: `timeline[seq ${victim}]`, stream: 'recorded', projection: null }]),
    );

    await redriveProjectionDeadLetter({ dataSource: db, nc, stream }, caseViewProjection, victim);
    const audit = await auditCase({ ...deps, scan: true }, caseId);
    expect(audit).toMatchObject({ drift: [], eventsFolded: kept.length + 1 });
    expect((await auditCase(deps, caseId)).read).toBe('by_seq');
    expect((await listProjectionDeadLetters(db)).find((d) => d.seq === victim)?.redrivenAt).not.toBeNull();
  });

  it('a live runner folds on from the re-driven case, not from the state it remembered before the re-drive', async () => {
    const { namespace, stream, ds: db, catalog } = await setup();
    const { events, caseIds } = generateHistory({ cases: 5, seed: 12, revisionLoops: 1 });
    const caseId = caseIds[1] as string;
    const own = events.filter((e) => e.aggregate === 'case' && e.aggregateId === caseId);
    const held = own.slice(-2);
    await publishEvents(
      nc,
      namespace,
      events.filter((e) => !held.includes(e)),
    );
    const first = await start(db, stream);
    await first.catchUp();
    await first.close();

    // As if an older reader had refused one middle event of the case (as in the test above).
    const { victim } = await refuseOneEvent(db, catalog, namespace, stream, caseId);

    // A live runner folds one more event of the case: it now remembers the case without the victim.
    const live = await start(db, stream);
    await publishEvents(nc, namespace, [held[0] as (typeof held)[number]]);
    await live.catchUp();
    // The re-drive re-folds the case with the victim, behind the live runner's back …
    await redriveProjectionDeadLetter({ dataSource: db, nc, stream }, caseViewProjection, victim);
    // … and the runner's next event of that case must fold on from the re-driven row.
    await publishEvents(nc, namespace, [held[1] as (typeof held)[number]]);
    await live.catchUp();
    await live.close();
    const audit = await auditCase({ dataSource: db, nc, stream, namespace, scan: true }, caseId);
    expect(audit.drift).toEqual([]);
    expect(audit.eventsFolded).toBe(own.length);
  });

  it('turns a poison message into a dead letter naming its sequence and goes on', async () => {
    const { namespace, stream, ds: db, catalog } = await setup();
    const { events } = generateHistory({ cases: 10, seed: 5 });
    await publishEvents(nc, namespace, events.slice(0, 30));
    const junk = await publishRaw(nc, `${namespace}.case.Cjunk.coordinator`, '{"not": "an event"');
    const liar = await publishRaw(
      nc,
      `${namespace}.case.Cliar.worker`,
      JSON.stringify({ ...events[1], aggregateId: 'Csomeoneelse' }),
    );
    const last = await publishEvents(nc, namespace, events.slice(30));

    const runner = await start(db, stream, { batchSize: 16 });
    await runner.catchUp();
    expect(runner.checkpoint).toBe(last);
    await runner.close();

    const dead = await listProjectionDeadLetters(db);
    expect(dead.map((d) => [d.seq, d.code])).toEqual([
      [junk, 'malformed_json'],
      [liar, 'subject_mismatch'],
    ]);
    const [{ n }] = await db.query(`select count(*)::int as n from ${catalog.t('timeline')}`);
    expect(n).toBe(events.length);
    const redrive = await redriveProjectionDeadLetter(
      { dataSource: db, nc, stream },
      caseViewProjection,
      junk,
    ).then(
      () => 'redriven',
      (e: unknown) => (isProjectionError(e) ? e.code : String(e)),
    );
    expect(redrive).toBe('still_undecodable');
  });
});
