import { JetStreamClient, JetStreamManager, NatsConnection } from 'nats';
import type { PoolClient } from 'pg';
import { Gauge, Registry } from 'prom-client';
import { DataSource, QueryRunner } from 'typeorm';
import { ProjectionCatalog } from './projection-catalog';
import { ProjectionError } from './projection.errors';
import { Projection } from './projection';
import { BatchWriter } from './runner-commit';
import { logDeadLetters } from './runner-dead-letters';
import { bindVersion, releaseRunnerLocks, takeRunnerLock, VersionBinding } from './runner-fence';
import { fetchBatch, Fetched } from './runner-fetch';
import { contextFor, PreparedBatch, Prepared, prepareBatch } from './runner-prepare';
import { BoundedStreamReader } from './stream-reader';

export { copyIn } from './runner-commit';
export { decodeBatch } from './runner-fetch';
export { contextFor, writeChanges } from './runner-prepare';

export interface ProjectionRunnerOptions {
  dataSource: DataSource;
  nc: NatsConnection;
  stream: string;
  projection: Projection;
  /** Messages per batch (and per transaction). */
  batchSize?: number;
  /** `live` writes whichever version readers see; `{ version }` builds that version (a rebuild). */
  target?: 'live' | { version: number };
  /** Where the lag and checkpoint gauges are registered (the service's registry). */
  registry?: Registry;
  log?: (entry: Record<string, unknown>) => void;
  /**
   * Called inside the batch's transaction after the rows are written and before the checkpoint
   * commits: the point where a crash must lose the whole batch. Tests stop a process here.
   */
  beforeCommit?: (lastSeq: number) => Promise<void> | void;
}

export interface BatchOutcome {
  applied: number;
  deadLettered: number;
  checkpoint: number;
  remaining: number;
}

/**
 * Applies the stream to one version of a projection, in batches, each batch and its checkpoint in
 * one Postgres transaction. One runner per (projection, role) holds a session advisory lock on its
 * own connection and writes through that same connection, so a runner whose connection dies loses
 * its lock and its open transaction together; a second runner is refused (fenced).
 *
 * The steps live beside it: the lock and the version it is bound to (`runner-fence`), reading and
 * decoding a batch (`runner-fetch`), applying it in memory (`runner-prepare`), writing it with its
 * checkpoint (`runner-commit`) and the dead letters (`runner-dead-letters`).
 */
export class ProjectionRunner {
  private readonly catalog: ProjectionCatalog;
  private readonly js: JetStreamClient;
  private readonly batchSize: number;
  private readonly writer: BatchWriter;
  private reader: BoundedStreamReader | null = null;
  private prefetched: Promise<Prepared> | null = null;
  private readonly memo = new Map<string, unknown>();
  private stopped = false;
  /** Set when the runner's own Postgres connection errors or ends (its advisory lock is gone with it). */
  private connectionLost = false;
  /**
   * The version written, its checkpoint, and its epoch when this runner last read it: what the
   * runner remembers is valid for that epoch only.
   */
  private bound: VersionBinding = { version: 0, checkpoint: 0, epoch: 0, streamCreated: '' };
  private readonly lagGauge: Gauge | null;
  private readonly checkpointGauge: Gauge | null;

  private constructor(
    private readonly opts: ProjectionRunnerOptions,
    private readonly jsm: JetStreamManager,
    private readonly qr: QueryRunner,
    client: PoolClient,
  ) {
    this.catalog = new ProjectionCatalog(opts.dataSource);
    // `on`, not `once`: a client that errors again after TypeORM let go of it must still have a
    // listener, or the second 'error' would be unhandled and end the process.
    const lost = () => (this.connectionLost = true);
    client.on('error', lost);
    client.on('end', lost);
    this.js = opts.nc.jetstream();
    this.batchSize = opts.batchSize ?? 1_000;
    this.writer = new BatchWriter(qr, client, this.catalog, {
      projection: opts.projection,
      stream: opts.stream,
      target: this.target,
      beforeCommit: opts.beforeCommit,
    });
    this.lagGauge = opts.registry
      ? gauge(
          opts.registry,
          'caseloop_projection_lag_events',
          'Stream last sequence minus the projection checkpoint',
        )
      : null;
    this.checkpointGauge = opts.registry
      ? gauge(opts.registry, 'caseloop_projection_checkpoint', 'Last stream sequence applied')
      : null;
  }

  /** Takes the runner's advisory lock and checks the stream identity and the projection's shape. */
  static async start(opts: ProjectionRunnerOptions): Promise<ProjectionRunner> {
    const catalog = new ProjectionCatalog(opts.dataSource);
    if ((opts.target ?? 'live') === 'live') await catalog.ensure(opts.projection);
    const jsm = await opts.nc.jetstreamManager();
    const qr = opts.dataSource.createQueryRunner();
    // The driver's own client on the runner's connection: COPY goes through it, inside the batch's transaction.
    const client = (await qr.connect()) as PoolClient;
    const runner = new ProjectionRunner(opts, jsm, qr, client);
    try {
      await takeRunnerLock(qr, catalog, opts.projection.name, runner.target);
      await runner.load();
      return runner;
    } catch (e) {
      await qr.release();
      throw e;
    }
  }

  get projection(): Projection {
    return this.opts.projection;
  }

  get checkpoint(): number {
    return this.bound.checkpoint;
  }

  get activeVersion(): number {
    return this.bound.version;
  }

  private get target(): 'live' | { version: number } {
    return this.opts.target ?? 'live';
  }

  private async load(): Promise<void> {
    const o = this.opts;
    this.bound = await bindVersion(this.catalog, this.qr, this.jsm, o.projection, o.stream, this.target);
  }

  /** Stream last sequence minus the checkpoint. */
  async lag(): Promise<number> {
    const si = await this.jsm.streams.info(this.opts.stream);
    const lag = Math.max(0, si.state.last_seq - this.bound.checkpoint);
    this.lagGauge?.set({ projection: this.opts.projection.name }, lag);
    return lag;
  }

  /** Applies batches until the checkpoint reaches `until` (default: the stream's last sequence now). */
  async catchUp({
    until,
    onBatch,
  }: { until?: number; onBatch?: (b: BatchOutcome) => void } = {}): Promise<number> {
    const target = until ?? (await this.jsm.streams.info(this.opts.stream)).state.last_seq;
    while (!this.stopped && this.bound.checkpoint < target) {
      const outcome = await this.step();
      if (outcome && onBatch) onBatch(outcome);
    }
    return this.bound.checkpoint;
  }

  /**
   * Follows the stream until `stop()`. Bad messages become dead letters; a failed batch (Postgres
   * away, a bug) is rolled back and retried with backoff; a fenced runner, a recreated stream or a
   * changed shape stop the loop with the error.
   */
  async follow({ onBatch }: { onBatch?: (b: BatchOutcome) => void } = {}): Promise<void> {
    let backoff = 250;
    while (!this.stopped) {
      try {
        const outcome = await this.step(2_000);
        if (outcome && onBatch) onBatch(outcome);
        backoff = 250;
      } catch (e) {
        if (e instanceof ProjectionError) throw e;
        // The runner's own connection is gone (Postgres restarted, the network cut): its lock went
        // with it, so this runner must not write again. The host starts a new one, which takes the
        // lock anew once the database answers, or finds it taken and stands by.
        if (this.qr.isReleased || this.connectionLost)
          throw new ProjectionError(
            'connection_lost',
            `${this.opts.projection.name}: the runner's database connection was lost (${String(e)})`,
          );
        this.opts.log?.({
          level: 'warn',
          msg: 'projection batch failed; retrying',
          projection: this.opts.projection.name,
          error: String(e),
        });
        await this.resetReader();
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
  }

  stop(): void {
    this.stopped = true;
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.resetReader();
    // A lost connection took its locks with it; TypeORM released the runner already.
    if (this.qr.isReleased) return;
    try {
      await releaseRunnerLocks(this.qr);
    } finally {
      await this.qr.release();
    }
  }

  /**
   * One batch. The batches form a pipeline: while this batch's statement runs in Postgres, the next
   * one is fetched, decoded and applied in memory (with the projection's memo of what this batch
   * wrote), so the runner's CPU work overlaps the database's.
   */
  async step(waitMs = 1_000): Promise<BatchOutcome | null> {
    if (!this.reader) {
      this.reader = await BoundedStreamReader.open(this.js, this.jsm, {
        stream: this.opts.stream,
        startSeq: this.bound.checkpoint + 1,
        batchSize: this.batchSize,
      });
    }
    const got = this.prefetched ? await this.prefetched : await this.prepare(this.fetch(waitMs));
    this.prefetched = null;
    if ('err' in got) {
      await this.resetReader();
      throw got.err;
    }
    if (!got.ok) return null;
    if (this.reader.remaining > 0) this.prefetched = this.prepare(this.fetch(waitMs));
    try {
      return await this.commit(got.ok);
    } catch (e) {
      await this.resetReader();
      throw e;
    }
  }

  private fetch(waitMs: number): Promise<Fetched> {
    return fetchBatch(this.reader as BoundedStreamReader, this.bound.checkpoint, waitMs);
  }

  private prepare(fetched: Promise<Fetched>): Promise<Prepared> {
    const version = this.bound.version;
    return prepareBatch(fetched, this.opts.projection, version, () =>
      contextFor(this.catalog, this.qr, version, this.memo),
    );
  }

  private async resetReader(): Promise<void> {
    const pending = this.prefetched;
    this.prefetched = null;
    if (pending) await pending;
    this.memo.clear();
    const r = this.reader;
    this.reader = null;
    if (r) await r.close();
  }

  private async commit(batch: PreparedBatch): Promise<BatchOutcome | null> {
    const p = this.opts.projection;
    if ((await this.writer.write(batch, this.bound)) === 'stale') {
      await this.resetReader();
      await this.load();
      return null;
    }
    this.bound.checkpoint = batch.lastSeq;
    const remaining = this.reader?.remaining ?? 0;
    this.lagGauge?.set({ projection: p.name }, remaining);
    this.checkpointGauge?.set({ projection: p.name }, this.bound.checkpoint);
    logDeadLetters(this.opts.log, p.name, batch.dead);
    return {
      applied: batch.applied,
      deadLettered: batch.dead.length,
      checkpoint: this.bound.checkpoint,
      remaining,
    };
  }
}

function gauge(registry: Registry, name: string, help: string): Gauge {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Gauge;
  return new Gauge({ name, help, labelNames: ['projection'], registers: [registry] });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
