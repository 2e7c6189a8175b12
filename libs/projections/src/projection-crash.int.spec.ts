import { eventually, NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { connect, JetStreamManager, NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { caseViewProjection } from './case-view/case-view.projection';
import { createProjectionDataSource, migrateProjections } from './data-source';
import { ProjectionCatalog } from './projection-catalog';
import { rebuildProjection } from './projection-rebuild';
import { ProjectionRunner } from './projection-runner';
import { generateHistory } from './testing/case-history.generator';
import { createTestStream, publishEvents } from './testing/publish-history';

jest.setTimeout(180_000);

const ROOT = join(__dirname, '..', '..', '..');

describe('a projection runner killed between apply and commit', () => {
  const namespace = uniqueSuffix('k');
  const stream = `T${namespace.toUpperCase()}`;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let ds: DataSource;

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
    jsm = await nc.jetstreamManager();
    await createTestStream(jsm, namespace, stream);
    ds = createProjectionDataSource({ url: PG_URL, schema: namespace });
    await ds.initialize();
    await migrateProjections(ds);
  });
  afterAll(async () => {
    await jsm.streams.delete(stream).catch(() => undefined);
    await ds.query(`drop schema if exists "${namespace}" cascade`);
    await ds.destroy();
    await nc.close();
  });

  it('(SIGKILL, a real process) resumes from the last commit with no duplicate rows and no double-folded case', async () => {
    const { events } = generateHistory({ cases: 150, seed: 77 });
    const last = await publishEvents(nc, namespace, events);
    const catalog = new ProjectionCatalog(ds);
    await catalog.ensure(caseViewProjection);

    const child = spawn(
      process.execPath,
      ['-r', '@swc-node/register', join(__dirname, 'testing', 'crash-runner.child.ts')],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          SWC_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
          CRASH_NATS_URL: NATS_URL,
          CRASH_PG_URL: PG_URL,
          CRASH_SCHEMA: namespace,
          CRASH_STREAM: stream,
          CRASH_BATCH_SIZE: '200',
          CRASH_AT_BATCH: '3',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, signal) => resolve(signal)),
    );
    await eventually(
      () => out.includes('between apply and commit at 600') || (err ? Promise.reject(new Error(err)) : false),
      {
        timeoutMs: 90_000,
        what: 'the child inside its third batch',
      },
    );
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    // The third batch's rows were written inside the open transaction: none of them survived.
    expect((await catalog.active(caseViewProjection.name))?.checkpoint).toBe(400);
    const [{ n }] = await ds.query(`select count(*)::int as n from ${catalog.t('timeline')}`);
    expect(n).toBe(400);

    // Postgres releases the dead session's advisory lock once it notices the connection is gone.
    const resumed = await eventually(
      () =>
        ProjectionRunner.start({
          dataSource: ds,
          nc,
          stream,
          projection: caseViewProjection,
          batchSize: 200,
        }),
      {
        timeoutMs: 30_000,
        what: 'the lock to be released',
      },
    );
    expect(resumed.checkpoint).toBe(400);
    await resumed.catchUp();
    await resumed.close();
    const [{ rows, distinct }] = await ds.query(
      `select count(*)::int as rows, count(distinct seq)::int as distinct from ${catalog.t('timeline')}`,
    );
    expect([rows, distinct]).toEqual([last, last]);

    // The resumed projection equals one built in a single pass from the stream, row for row.
    const report = await rebuildProjection({
      dataSource: ds,
      nc,
      stream,
      namespace,
      projection: caseViewProjection,
      keepOld: true,
      sampleSize: 10,
    });
    for (const t of report.tables) expect(t).toMatchObject({ rebuilt: t.live, onlyRebuilt: 0, onlyLive: 0 });
  });
});
