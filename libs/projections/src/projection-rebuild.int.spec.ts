import { eventually, NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { connect, JetStreamManager, NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { caseViewProjection } from './case-view/case-view.projection';
import { createProjectionDataSource, migrateProjections } from './data-source';
import { ProjectionCatalog } from './projection-catalog';
import { rebuildProjection } from './projection-rebuild';
import { ProjectionRunner } from './projection-runner';
import { generateHistory } from './testing/case-history.generator';
import { createTestStream, publishEvents } from './testing/publish-history';

jest.setTimeout(300_000);

describe('rebuilding a projection beside the live one', () => {
  const namespace = uniqueSuffix('r');
  const stream = `T${namespace.toUpperCase()}`;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let ds: DataSource;
  let catalog: ProjectionCatalog;

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
    jsm = await nc.jetstreamManager();
    await createTestStream(jsm, namespace, stream);
    ds = createProjectionDataSource({ url: PG_URL, schema: namespace, poolSize: 4 });
    await ds.initialize();
    await migrateProjections(ds);
    catalog = new ProjectionCatalog(ds);
  });
  afterAll(async () => {
    await jsm.streams.delete(stream).catch(() => undefined);
    await ds.query(`drop schema if exists "${namespace}" cascade`);
    await ds.destroy();
    await nc.close();
  });

  it('equals the incrementally built projection, row for row, on 10,000+ events across 1,000+ cases', async () => {
    const { events } = generateHistory({ cases: 1_100, seed: 42 });
    expect(events.length).toBeGreaterThan(10_000);

    // The live version grows incrementally: odd batch sizes, the history arriving in slices.
    const live = await ProjectionRunner.start({
      dataSource: ds,
      nc,
      stream,
      projection: caseViewProjection,
      batchSize: 333,
    });
    const slices = 5;
    const per = Math.ceil(events.length / slices);
    for (let i = 0; i < slices; i++) {
      await publishEvents(nc, namespace, events.slice(i * per, (i + 1) * per));
      await live.catchUp();
    }
    expect(live.checkpoint).toBe(events.length);

    // A rebuild interrupted after a few batches resumes from its own checkpoint.
    const partial = await rebuildProjection({
      dataSource: ds,
      nc,
      stream,
      namespace,
      projection: caseViewProjection,
      batchSize: 1_000,
      maxBatches: 3,
    });
    expect(partial).toMatchObject({ version: 2, switched: false, checkpoint: 3_000 });

    // The live runner keeps following while the rebuild runs (and is paused by the switch).
    const following = live.follow();
    const phases: string[] = [];
    const report = await rebuildProjection({
      dataSource: ds,
      nc,
      stream,
      namespace,
      projection: caseViewProjection,
      batchSize: 1_000,
      keepOld: true,
      sampleSize: 25,
      onProgress: (p) => phases.push(p.phase),
    });
    expect(report).toMatchObject({
      version: 2,
      previous: 1,
      resumed: true,
      fromCheckpoint: 3_000,
      checkpoint: events.length,
      switched: true,
    });
    expect(phases).toEqual(
      expect.arrayContaining(['catching_up', 'indexing', 'verifying', 'switching', 'done']),
    );
    expect(report.samples).toHaveLength(25);
    expect(report.samples.every((s) => s.drift === 0)).toBe(true);
    for (const t of report.tables) expect(t).toMatchObject({ rebuilt: t.live, onlyRebuilt: 0, onlyLive: 0 });
    expect(report.tables.find((t) => t.table === 'timeline')?.rebuilt).toBe(events.length);
    expect(report.tables.find((t) => t.table === 'cases')?.rebuilt).toBe(1_100);

    // Every row of every table, compared directly between the two versions.
    for (const spec of caseViewProjection.tables) {
      const [diff] = await ds.query(
        `select (select count(*) from (select * from ${catalog.tableOf(spec.name, 1)} except all select * from ${catalog.tableOf(spec.name, 2)}) a)::int as a,
                (select count(*) from (select * from ${catalog.tableOf(spec.name, 2)} except all select * from ${catalog.tableOf(spec.name, 1)}) b)::int as b`,
      );
      expect({ table: spec.name, ...diff }).toEqual({ table: spec.name, a: 0, b: 0 });
    }

    // Readers now see v2, and the live runner carries on writing v2.
    expect((await catalog.active(caseViewProjection.name))?.version).toBe(2);
    const more = generateHistory({ cases: 20, seed: 43 }).events;
    await publishEvents(nc, namespace, more);
    const target = events.length + more.length;
    await eventually(async () => (await catalog.active(caseViewProjection.name))?.checkpoint === target, {
      timeoutMs: 60_000,
      what: 'the live runner following v2',
    });
    live.stop();
    await following;
    await live.close();
    expect(live.activeVersion).toBe(2);
    const [{ n }] = await ds.query(`select count(*)::int as n from ${catalog.t('cases')}`);
    expect(n).toBe(1_120);
    const [{ m }] = await ds.query(`select count(*)::int as m from ${catalog.tableOf('cases', 1)}`);
    expect(m).toBe(1_100);

    // The next rebuild names what differs in the live version: a tampered case row, a lost timeline row.
    await ds.query(
      `update ${catalog.tableOf('cases', 2)} set status = 'tampered' where case_id = (select min(case_id) from ${catalog.tableOf('cases', 2)})`,
    );
    await ds.query(`delete from ${catalog.tableOf('timeline', 2)} where seq = 5`);
    const third = await rebuildProjection({
      dataSource: ds,
      nc,
      stream,
      namespace,
      projection: caseViewProjection,
      batchSize: 2_000,
      sampleSize: 5,
    });
    expect(third).toMatchObject({ version: 3, previous: 2, switched: true, checkpoint: target });
    const byTable = Object.fromEntries(third.tables.map((t) => [t.table, t]));
    expect(byTable).toEqual({
      cases: { table: 'cases', rebuilt: 1_120, live: 1_120, onlyRebuilt: 1, onlyLive: 1 },
      case_sources: expect.objectContaining({ onlyRebuilt: 0, onlyLive: 0 }),
      sources: expect.objectContaining({ onlyRebuilt: 0, onlyLive: 0 }),
      timeline: { table: 'timeline', rebuilt: target, live: target - 1, onlyRebuilt: 1, onlyLive: 0 },
    });
  });
});
