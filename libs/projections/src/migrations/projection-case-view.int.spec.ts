import { NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { connect, JetStreamManager, NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { caseViewProjection } from '../case-view/case-view.projection';
import { createProjectionDataSource, migrateProjections, PROJECTION_MIGRATIONS } from '../data-source';
import { listProjectionDeadLetters } from '../projection-dead-letters';
import { ProjectionCatalog } from '../projection-catalog';
import { ProjectionRunner } from '../projection-runner';
import { Projection, projectionShape } from '../projection';
import { generateHistory } from '../testing/case-history.generator';
import { createTestStream, publishEvents, publishRaw } from '../testing/publish-history';
import { ProjectionCaseView1796256000000 } from './1796256000000-projection-case-view';

jest.setTimeout(120_000);

/** The case read model exactly as the previous release registered it: the same tables, the old name. */
const formerCaseView: Projection = { ...caseViewProjection, name: 'case-ledger' };

const RUNTIME_TABLES = [
  'projection_heads',
  'projection_versions',
  'projection_checkpoints',
  'projection_dead_letters',
];

describe('migration: the case-ledger projection becomes case-view (real NATS and Postgres)', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const schemas: string[] = [];
  const streams: string[] = [];
  const sources: DataSource[] = [];

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
    jsm = await nc.jetstreamManager();
  });
  afterAll(async () => {
    const admin = createProjectionDataSource({ url: PG_URL, schema: 'public', poolSize: 1 });
    await admin.initialize();
    for (const s of schemas) await admin.query(`drop schema if exists "${s}" cascade`);
    await admin.destroy();
    for (const s of streams) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
  });
  afterEach(async () => {
    for (const ds of sources.splice(0)) if (ds.isInitialized) await ds.destroy();
  });

  /** A schema migrated as the previous release left it: every migration before the rename. */
  async function previousRelease(schema: string): Promise<DataSource> {
    const base = createProjectionDataSource({ url: PG_URL, schema, poolSize: 2 });
    const ds = new DataSource({
      ...base.options,
      migrations: PROJECTION_MIGRATIONS.filter((m) => m !== ProjectionCaseView1796256000000),
    } as typeof base.options);
    await ds.initialize();
    sources.push(ds);
    await migrateProjections(ds);
    return ds;
  }

  async function currentRelease(schema: string): Promise<DataSource> {
    const ds = createProjectionDataSource({ url: PG_URL, schema, poolSize: 2 });
    await ds.initialize();
    sources.push(ds);
    return ds;
  }

  /** How many rows of the runtime's tables carry each name. */
  async function rowsNamed(ds: DataSource, schema: string, name: string): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const t of RUNTIME_TABLES) {
      const [r] = await ds.query(`select count(*)::int as n from "${schema}".${t} where projection = $1`, [
        name,
      ]);
      out[t] = r.n;
    }
    return out;
  }

  it('moves the head, versions, checkpoint and dead letters to the new name; the runner goes on from its checkpoint', async () => {
    const schema = uniqueSuffix('m');
    const stream = `T${schema.toUpperCase()}`;
    schemas.push(schema);
    streams.push(stream);
    await createTestStream(jsm, schema, stream);
    const history = generateHistory({ cases: 12, seed: 5 });
    await publishEvents(nc, schema, history.events.slice(0, 60));
    const poison = await publishRaw(nc, `${schema}.case.Cpoison.coordinator`, 'not json');
    await publishEvents(nc, schema, history.events.slice(60));
    const last = (await jsm.streams.info(stream)).state.last_seq;
    const halfway = Math.floor(last / 2) + 1;
    expect(halfway).toBeGreaterThan(poison);

    // The previous release: its runner applied half the stream under the old name, dead letter included.
    const before = await previousRelease(schema);
    const old = await ProjectionRunner.start({
      dataSource: before,
      nc,
      stream,
      projection: formerCaseView,
      batchSize: 25,
    });
    await old.catchUp({ until: halfway });
    await old.close();
    const oldCatalog = new ProjectionCatalog(before);
    const was = await oldCatalog.active('case-ledger');
    expect(was).toMatchObject({ version: 1, status: 'active', shape: projectionShape(formerCaseView) });
    expect(was?.checkpoint).toBeGreaterThanOrEqual(halfway);
    const timelineBefore: { n: number }[] = await before.query(
      `select count(*)::int as n from ${oldCatalog.t('timeline')}`,
    );
    // Every sequence applied is a timeline row or the one dead letter.
    expect(timelineBefore[0]?.n).toBe((was?.checkpoint ?? 0) - 1);
    await before.destroy();

    // This release: migrating renames, nothing else.
    const after = await currentRelease(schema);
    expect(await migrateProjections(after)).toEqual(['ProjectionCaseView1796256000000']);
    expect(await rowsNamed(after, schema, 'case-ledger')).toEqual({
      projection_heads: 0,
      projection_versions: 0,
      projection_checkpoints: 0,
      projection_dead_letters: 0,
    });
    expect(await rowsNamed(after, schema, 'case-view')).toEqual({
      projection_heads: 1,
      projection_versions: 1,
      projection_checkpoints: 1,
      projection_dead_letters: 1,
    });
    const catalog = new ProjectionCatalog(after);
    const is = await catalog.active('case-view');
    expect(is).toEqual({
      ...was,
      projection: 'case-view',
      shape: projectionShape(caseViewProjection),
    });
    expect(await listProjectionDeadLetters(after, { projection: 'case-view' })).toEqual([
      expect.objectContaining({ projection: 'case-view', version: 1, seq: poison, code: 'malformed_json' }),
    ]);
    // `migrate` finds the active version it has: no new version, no rebuild.
    expect(await catalog.ensure(caseViewProjection)).toMatchObject({
      version: 1,
      checkpoint: was?.checkpoint,
    });

    // The runner of this release accepts the version (same shape, same stream) and goes on from there.
    const runner = await ProjectionRunner.start({
      dataSource: after,
      nc,
      stream,
      projection: caseViewProjection,
    });
    try {
      expect(runner.activeVersion).toBe(1);
      expect(runner.checkpoint).toBe(was?.checkpoint);
      await runner.catchUp();
      expect(runner.checkpoint).toBe(last);
    } finally {
      await runner.close();
    }
    const timelineAfter: { n: number }[] = await after.query(
      `select count(*)::int as n from ${catalog.t('timeline')}`,
    );
    expect(timelineAfter[0]?.n).toBe(last - 1);
  });

  it('is undone by its down migration, and a schema without the old name is left alone', async () => {
    const schema = uniqueSuffix('m');
    schemas.push(schema);
    const before = await previousRelease(schema);
    await new ProjectionCatalog(before).ensure(formerCaseView);
    await before.destroy();

    const after = await currentRelease(schema);
    await migrateProjections(after);
    expect((await new ProjectionCatalog(after).active('case-view'))?.shape).toBe(
      projectionShape(caseViewProjection),
    );
    await after.undoLastMigration({ transaction: 'each' });
    expect(await rowsNamed(after, schema, 'case-view')).toMatchObject({
      projection_heads: 0,
      projection_versions: 0,
    });
    const back = await new ProjectionCatalog(after).active('case-ledger');
    expect(back).toMatchObject({ version: 1, status: 'active', shape: projectionShape(formerCaseView) });

    // A fresh schema: nothing under either name, the migration changes nothing.
    const fresh = uniqueSuffix('m');
    schemas.push(fresh);
    const ds = await currentRelease(fresh);
    expect(await migrateProjections(ds)).toContain('ProjectionCaseView1796256000000');
    expect(await rowsNamed(ds, fresh, 'case-view')).toMatchObject({
      projection_heads: 0,
      projection_versions: 0,
    });
  });

  it('refuses to merge when both names hold versions, and leaves both as they were', async () => {
    const schema = uniqueSuffix('m');
    schemas.push(schema);
    const before = await previousRelease(schema);
    await new ProjectionCatalog(before).ensure(formerCaseView);
    const [{ n: tables }] = await before.query(
      `select count(*)::int as n from information_schema.tables where table_schema = $1`,
      [schema],
    );
    // As if this release had started once against a schema it had not migrated: a case-view head too.
    await before.query(
      `insert into "${schema}".projection_versions (projection, version, status, shape) values ('case-view', 1, 'active', 'x')`,
    );
    await before.query(
      `insert into "${schema}".projection_heads (projection, active_version) values ('case-view', 1)`,
    );
    await before.destroy();

    const after = await currentRelease(schema);
    await expect(migrateProjections(after)).rejects.toThrow(/case-ledger cannot be renamed case-view/);
    expect(await rowsNamed(after, schema, 'case-ledger')).toMatchObject({
      projection_heads: 1,
      projection_versions: 1,
    });
    expect(await rowsNamed(after, schema, 'case-view')).toMatchObject({
      projection_heads: 1,
      projection_versions: 1,
    });
    const [{ n: still }] = await after.query(
      `select count(*)::int as n from information_schema.tables where table_schema = $1`,
      [schema],
    );
    expect(still).toBe(tables);
  });
});
