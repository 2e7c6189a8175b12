import { decodeEvent, isContractError, RecordedEvent } from '@caseloop/contracts';
import { JetStreamClient, JetStreamManager, JsMsg, NatsConnection } from 'nats';
import { Gauge, Registry } from 'prom-client';
import { DataSource, QueryRunner } from 'typeorm';
import { ProjectionCatalog, VersionInfo } from './projection-catalog';
import { ProjectionError } from './projection.errors';
import { ApplyContext, Projection, projectionShape, RowChanges } from './projection';
import { BoundedStreamReader } from './stream-reader';
import { Row, upsertStatements } from './table-spec';

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

interface DeadLetter {
  seq: number;
  subject: string;
  code: string;
  error: string;
  body: Buffer;
}

type Fetched = { ok: JsMsg[] } | { err: unknown };

/**
 * Applies the stream to one version of a projection, in batches, each batch and its checkpoint in
 * one Postgres transaction. One runner per (projection, role) holds a session advisory lock on its
 * own connection and writes through that same connection, so a runner whose connection dies loses
 * its lock and its open transaction together; a second runner is refused (fenced).
 */
export class ProjectionRunner {
  private readonly catalog: ProjectionCatalog;
  private readonly js: JetStreamClient;
  private readonly batchSize: number;
  private reader: BoundedStreamReader | null = null;
  private prefetched: Promise<Fetched> | null = null;
  private stopped = false;
  private version = 0;
  private checkpointSeq = 0;
  private streamCreated = '';
  private readonly lagGauge: Gauge | null;
  private readonly checkpointGauge: Gauge | null;

  private constructor(
    private readonly opts: ProjectionRunnerOptions,
    private readonly jsm: JetStreamManager,
    private readonly qr: QueryRunner,
  ) {
    this.catalog = new ProjectionCatalog(opts.dataSource);
    this.js = opts.nc.jetstream();
    this.batchSize = opts.batchSize ?? 1_000;
    this.lagGauge = opts.registry ? gauge(opts.registry, 'caseloop_projection_lag_events', 'Stream last sequence minus the projection checkpoint') : null;
    this.checkpointGauge = opts.registry ? gauge(opts.registry, 'caseloop_projection_checkpoint', 'Last stream sequence applied') : null;
  }

  /** Takes the runner's advisory lock and checks the stream identity and the projection's shape. */
  static async start(opts: ProjectionRunnerOptions): Promise<ProjectionRunner> {
    const catalog = new ProjectionCatalog(opts.dataSource);
    if ((opts.target ?? 'live') === 'live') await catalog.ensure(opts.projection);
    const jsm = await opts.nc.jetstreamManager();
    const qr = opts.dataSource.createQueryRunner();
    await qr.connect();
    const runner = new ProjectionRunner(opts, jsm, qr);
    try {
      await runner.lock();
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
    return this.checkpointSeq;
  }

  get activeVersion(): number {
    return this.version;
  }

  private role(): string {
    const t = this.opts.target ?? 'live';
    return t === 'live' ? 'live' : `build`;
  }

  private async lock(): Promise<void> {
    const key = `caseloop/${this.catalog.schema}/${this.opts.projection.name}/${this.role()}`;
    const [row] = await this.qr.query(`select pg_try_advisory_lock(hashtextextended($1, 0)) as ok`, [key]);
    if (!row?.ok) {
      throw new ProjectionError('fenced', `another ${this.role()} runner of ${this.opts.projection.name} holds its lock`);
    }
  }

  /** Resolves the version to write, its checkpoint and the stream identity it is bound to. */
  private async load(): Promise<void> {
    const p = this.opts.projection;
    const t = this.opts.target ?? 'live';
    const info = t === 'live' ? await this.catalog.active(p.name, this.qr) : await this.catalog.version(p.name, t.version, this.qr);
    if (!info) throw new ProjectionError('no_active_version', `${p.name} has no ${t === 'live' ? 'active version' : `v${t.version}`}`);
    if (info.shape !== projectionShape(p)) {
      throw new ProjectionError(
        'shape_changed',
        `${p.name} v${info.version} was built by another revision or table shape; run \`caseloop rebuild ${p.name}\``,
      );
    }
    this.streamCreated = await this.checkStream(info);
    this.version = info.version;
    this.checkpointSeq = info.checkpoint;
  }

  private async checkStream(info: VersionInfo): Promise<string> {
    let created: string;
    let lastSeq: number;
    try {
      const si = await this.jsm.streams.info(this.opts.stream);
      created = si.created;
      lastSeq = si.state.last_seq;
    } catch (e) {
      throw new ProjectionError('stream_missing', `stream ${this.opts.stream} is not there (${(e as Error).message})`);
    }
    if (info.streamCreated && (info.stream !== this.opts.stream || info.streamCreated !== created)) {
      throw new ProjectionError(
        'stream_recreated',
        `${info.projection} v${info.version} was built from stream ${info.stream} created ${info.streamCreated}, ` +
          `but ${this.opts.stream} was created ${created}; refusing to apply it — rebuild the projection`,
      );
    }
    if (info.checkpoint > lastSeq) {
      throw new ProjectionError(
        'stream_recreated',
        `${info.projection} v${info.version} is at seq ${info.checkpoint} but ${this.opts.stream} ends at ${lastSeq}`,
      );
    }
    return created;
  }

  /** Stream last sequence minus the checkpoint. */
  async lag(): Promise<number> {
    const si = await this.jsm.streams.info(this.opts.stream);
    const lag = Math.max(0, si.state.last_seq - this.checkpointSeq);
    this.lagGauge?.set({ projection: this.opts.projection.name }, lag);
    return lag;
  }

  /** Applies batches until the checkpoint reaches `until` (default: the stream's last sequence now). */
  async catchUp({ until, onBatch }: { until?: number; onBatch?: (b: BatchOutcome) => void } = {}): Promise<number> {
    const target = until ?? (await this.jsm.streams.info(this.opts.stream)).state.last_seq;
    while (!this.stopped && this.checkpointSeq < target) {
      const outcome = await this.step();
      if (outcome && onBatch) onBatch(outcome);
    }
    return this.checkpointSeq;
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
        this.opts.log?.({ level: 'warn', msg: 'projection batch failed; retrying', projection: this.opts.projection.name, error: String(e) });
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
    try {
      await this.qr.query(`select pg_advisory_unlock_all()`);
    } finally {
      await this.qr.release();
    }
  }

  /** One batch: fetch (the next one is prefetched while this one is written), decode, apply, commit. */
  async step(waitMs = 1_000): Promise<BatchOutcome | null> {
    if (!this.reader) {
      this.reader = await BoundedStreamReader.open(this.js, this.jsm, {
        stream: this.opts.stream,
        startSeq: this.checkpointSeq + 1,
        batchSize: this.batchSize,
      });
    }
    const fetched = this.prefetched ? await this.prefetched : await settle(this.reader.next(waitMs));
    this.prefetched = null;
    if ('err' in fetched) {
      await this.resetReader();
      throw fetched.err;
    }
    const msgs = fetched.ok.filter((m) => m.seq > this.checkpointSeq);
    if (msgs.length === 0) return null;
    if (this.reader.remaining > 0) this.prefetched = settle(this.reader.next(waitMs));
    try {
      return await this.commit(msgs);
    } catch (e) {
      await this.resetReader();
      throw e;
    }
  }

  private async resetReader(): Promise<void> {
    const pending = this.prefetched;
    this.prefetched = null;
    if (pending) await pending;
    const r = this.reader;
    this.reader = null;
    if (r) await r.close();
  }

  private async commit(msgs: JsMsg[]): Promise<BatchOutcome | null> {
    const p = this.opts.projection;
    const { events, dead } = decodeBatch(msgs);
    const qr = this.qr;
    await qr.startTransaction();
    try {
      const version = await this.lockVersion();
      if (version !== this.version) {
        // Readers were switched to another version (a rebuild finished): follow it from its checkpoint.
        await qr.rollbackTransaction();
        await this.resetReader();
        await this.load();
        return null;
      }
      const [cp] = await qr.query(
        `select seq from ${this.catalog.t('projection_checkpoints')} where projection = $1 and version = $2 for update`,
        [p.name, version],
      );
      if (Number(cp?.seq) !== this.checkpointSeq) {
        throw new ProjectionError('checkpoint_moved', `${p.name} v${version} checkpoint moved to ${cp?.seq} under this runner`);
      }
      const changes = await p.apply(events, this.context(qr, version));
      await this.write(qr, version, changes);
      if (dead.length > 0) await this.recordDeadLetters(qr, version, dead);
      const last = (msgs[msgs.length - 1] as JsMsg).seq;
      await qr.query(
        `update ${this.catalog.t('projection_checkpoints')} set seq = $3, stream = $4, stream_created = $5, updated_at = now()
          where projection = $1 and version = $2`,
        [p.name, version, last, this.opts.stream, this.streamCreated],
      );
      if (this.opts.beforeCommit) await this.opts.beforeCommit(last);
      await qr.commitTransaction();
      this.checkpointSeq = last;
    } catch (e) {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      throw e;
    }
    const remaining = this.reader?.remaining ?? 0;
    this.lagGauge?.set({ projection: p.name }, remaining);
    this.checkpointGauge?.set({ projection: p.name }, this.checkpointSeq);
    for (const d of dead) {
      this.opts.log?.({ level: 'warn', msg: 'dead letter', projection: p.name, seq: d.seq, subject: d.subject, code: d.code });
    }
    return { applied: events.length, deadLettered: dead.length, checkpoint: this.checkpointSeq, remaining };
  }

  /**
   * Live runners share-lock the projection's head row, so a switch (which takes it for update)
   * waits for the batch in flight and the next batch sees the new version.
   */
  private async lockVersion(): Promise<number> {
    const p = this.opts.projection;
    const t = this.opts.target ?? 'live';
    if (t === 'live') {
      const [h] = await this.qr.query(`select active_version from ${this.catalog.t('projection_heads')} where projection = $1 for share`, [p.name]);
      if (!h) throw new ProjectionError('no_active_version', `${p.name} has no active version`);
      return Number(h.active_version);
    }
    const [v] = await this.qr.query(
      `select status from ${this.catalog.t('projection_versions')} where projection = $1 and version = $2 for share`,
      [p.name, t.version],
    );
    if (!v || v.status !== 'building') {
      throw new ProjectionError('fenced', `${p.name} v${t.version} is ${v?.status ?? 'gone'}, not building`);
    }
    return t.version;
  }

  private context(qr: QueryRunner, version: number): ApplyContext {
    return contextFor(this.catalog, qr, version);
  }

  private async write(qr: QueryRunner, version: number, changes: RowChanges): Promise<void> {
    await writeChanges(this.catalog, this.opts.projection, qr, version, changes);
  }

  private async recordDeadLetters(qr: QueryRunner, version: number, dead: DeadLetter[]): Promise<void> {
    const params: unknown[] = [];
    const tuples = dead.map((d) => {
      params.push(this.opts.projection.name, version, d.seq, d.subject, d.code, d.error, d.body);
      const n = params.length;
      return `($${n - 6}, $${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n})`;
    });
    await qr.query(
      `insert into ${this.catalog.t('projection_dead_letters')} (projection, version, seq, subject, code, error, body)
       values ${tuples.join(', ')} on conflict (projection, version, seq) do nothing`,
      params,
    );
  }
}

export function contextFor(catalog: ProjectionCatalog, qr: Pick<QueryRunner, 'query'>, version: number): ApplyContext {
  return {
    table: (name) => catalog.tableOf(name, version),
    query: async <T extends Row = Row>(sql: string, params?: unknown[]) => (await qr.query(sql, params)) as T[],
  };
}

export async function writeChanges(
  catalog: ProjectionCatalog,
  p: Projection,
  qr: Pick<QueryRunner, 'query'>,
  version: number,
  changes: RowChanges,
): Promise<void> {
  for (const [table, rows] of Object.entries(changes)) {
    const spec = p.tables.find((t) => t.name === table);
    if (!spec) throw new Error(`${p.name} returned rows for ${table}, which it does not declare`);
    for (const stmt of upsertStatements(catalog.schema, spec, version, rows)) await qr.query(stmt.sql, stmt.params);
  }
}

/** Decodes a batch; a message that breaks its contract is set aside with its sequence, never thrown. */
export function decodeBatch(msgs: readonly JsMsg[]): { events: RecordedEvent[]; dead: DeadLetter[] } {
  const events: RecordedEvent[] = [];
  const dead: DeadLetter[] = [];
  for (const m of msgs) {
    try {
      events.push(decodeEvent(m.subject, m.data, m.seq));
    } catch (e) {
      dead.push({
        seq: m.seq,
        subject: m.subject,
        code: isContractError(e) ? e.code : 'decode_failed',
        error: (e as Error).message.slice(0, 2_000),
        body: Buffer.from(m.data.subarray(0, 256 * 1024)),
      });
    }
  }
  return { events, dead };
}

function gauge(registry: Registry, name: string, help: string): Gauge {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Gauge;
  return new Gauge({ name, help, labelNames: ['projection'], registers: [registry] });
}

const settle = (p: Promise<JsMsg[]>): Promise<Fetched> => p.then((ok) => ({ ok }), (err: unknown) => ({ err }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
