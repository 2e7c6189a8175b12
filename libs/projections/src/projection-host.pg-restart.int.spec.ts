import { eventually, freePort, NATS_URL, uniqueSuffix } from '@caseloop/testing';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, chownSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, JetStreamManager, NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { createProjectionDataSource } from './data-source';
import { ProjectionCatalog } from './projection-catalog';
import { ProjectionHost } from './projection-host';
import { generateHistory } from './testing/case-history.generator';
import { createTestStream, publishEvents } from './testing/publish-history';

jest.setTimeout(180_000);

/** PostgreSQL's server binaries on this machine (Debian keeps them out of PATH). */
function pgBin(): string | null {
  const probe = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const candidates = [
    probe.status === 0 ? probe.stdout.trim() : '',
    ...(existsSync('/usr/lib/postgresql')
      ? readdirSync('/usr/lib/postgresql')
          .sort()
          .reverse()
          .map((v) => `/usr/lib/postgresql/${v}/bin`)
      : []),
  ];
  return candidates.find((d) => d && existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl'))) ?? null;
}

/**
 * A PostgreSQL server of the test's own (own data dir, own port), so it can be stopped hard and
 * started again without touching anyone else's database. initdb refuses to run as root: as root,
 * it runs as the `postgres` user.
 */
class PrivatePostgres {
  readonly dir = mkdtempSync(join(tmpdir(), 'caseloop-pg-'));
  readonly data = join(this.dir, 'data');
  private readonly asRoot = process.getuid?.() === 0;
  constructor(
    private readonly bin: string,
    readonly port: number,
  ) {}

  private run(tool: string, args: string[]): void {
    const cmd = join(this.bin, tool);
    if (this.asRoot) execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { stdio: 'pipe' });
    else execFileSync(cmd, args, { stdio: 'pipe' });
  }

  init(): void {
    if (this.asRoot) chownSync(this.dir, Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), 0);
    this.run('initdb', ['-D', this.data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  }

  start(): void {
    const opts = `-c listen_addresses=127.0.0.1 -p ${this.port} -k ${this.dir} -c fsync=off`;
    this.run('pg_ctl', ['-D', this.data, '-o', opts, '-l', join(this.dir, 'log'), '-w', 'start']);
  }

  /** As a crash would: no checkpoint, every connection cut. */
  stopHard(): void {
    this.run('pg_ctl', ['-D', this.data, '-m', 'immediate', '-w', 'stop']);
  }

  url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  cleanup(): void {
    try {
      this.stopHard();
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const bin = pgBin();
const maybe = bin ? describe : describe.skip;
if (!bin) console.warn('no PostgreSQL server binaries (initdb, pg_ctl): the restart test is skipped');

maybe('a projection host across a PostgreSQL restart', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let pg: PrivatePostgres;
  let ds: DataSource;
  let host: ProjectionHost | null = null;
  let stream = '';

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
    jsm = await nc.jetstreamManager();
    pg = new PrivatePostgres(bin!, await freePort());
    pg.init();
    pg.start();
  });
  afterAll(async () => {
    await host?.stop();
    if (ds?.isInitialized) await ds.destroy().catch(() => undefined);
    pg?.cleanup();
    if (stream) await jsm.streams.delete(stream).catch(() => undefined);
    await nc?.close();
  });

  it('keeps its service up while the database is down and catches up once it is back', async () => {
    const namespace = uniqueSuffix('pgr');
    stream = `T${namespace.toUpperCase()}`;
    await createTestStream(jsm, namespace, stream);
    ds = createProjectionDataSource({ url: pg.url(), schema: namespace, poolSize: 3 });
    await ds.initialize();
    const catalog = new ProjectionCatalog(ds);
    const { events } = generateHistory({ cases: 12, seed: 21 });
    const half = Math.floor(events.length / 2);
    await publishEvents(nc, namespace, events.slice(0, half));

    const logged: Array<Record<string, unknown>> = [];
    host = await ProjectionHost.start({
      dataSource: ds,
      nc,
      stream,
      retryMs: 200,
      log: (e) => logged.push(e),
    });
    const state = () => host!.status()[0];
    await eventually(() => state()?.state === 'running' && state()?.checkpoint === half, {
      what: 'the first half projected',
      timeoutMs: 30_000,
    });

    // The database dies; the stream keeps recording.
    pg.stopHard();
    await publishEvents(nc, namespace, events.slice(half));
    await eventually(() => state()?.state === 'refused', {
      what: 'the runner reports the database down',
      timeoutMs: 30_000,
    });
    expect(state()?.reason).toMatch(/^connection_lost: /);
    // Down for a while: the host keeps retrying, it does not give up or throw.
    await new Promise((r) => setTimeout(r, 2_000));

    pg.start();
    await eventually(
      async () =>
        state()?.state === 'running' &&
        (await catalog.active('case-view').catch(() => null))?.checkpoint === events.length,
      { what: 'the rest projected once the database is back', timeoutMs: 60_000 },
    );
    // Every event once: the timeline holds each recorded case event exactly once.
    const rows: Array<{ n: string; distinct: string }> = await ds.query(
      `select count(*) as n, count(distinct seq) as distinct from ${catalog.t('timeline')}`,
    );
    expect(Number(rows[0]!.n)).toBe(Number(rows[0]!.distinct));
    expect(Number(rows[0]!.n)).toBeGreaterThan(0);
    expect(logged.some((e) => e.msg === 'projection runner refused')).toBe(true);
  });
});
