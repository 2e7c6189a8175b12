import { decodeEvent, isContractError, RecordedEvent } from '@caseloop/contracts';
import { JetStreamClient, JetStreamManager, JsMsg, NatsConnection } from 'nats';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Gauge, Registry } from 'prom-client';
import { DataSource, QueryRunner } from 'typeorm';
import { ProjectionCatalog, Sql, VersionInfo } from './projection-catalog';
import { ProjectionError } from './projection.errors';
import { ApplyContext, Projection, projectionShape, RowChanges } from './projection';
import { BoundedStreamReader } from './stream-reader';
import {
  batchWriteStatement,
  copyIntoSql,
  copyText,
  copyToStageSql,
  createStageSql,
  dedupeByKey,
  ident,
  Row,
  stageName,
  TableSpec,
  upsertFromStageSql,
} from './table-spec';

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

interface DecodedBatch {
  lastSeq: number;
  events: RecordedEvent[];
  dead: DeadLetter[];
}

type Fetched = { ok: DecodedBatch | null } | { err: unknown };

/** One table's rows of a batch in COPY's text format. */
interface StagedRows {
  spec: TableSpec;
  text: string;
  /** For an append-only table with one numeric key: the lowest and highest key of these rows. */
  keyRange: [number, number] | null;
}

/** A batch applied in memory, ready to write: its rows already serialised for COPY. */
interface PreparedBatch {
  version: number;
  lastSeq: number;
  applied: number;
  dead: DeadLetter[];
  staged: StagedRows[];
}

type Prepared = { ok: PreparedBatch | null } | { err: unknown };

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
  private prefetched: Promise<Prepared> | null = null;
  private readonly memo = new Map<string, unknown>();
  /** Staging tables created on this runner's connection (temporary: they live as long as it). */
  private readonly stages = new Set<string>();
  private stopped = false;
  private version = 0;
  private checkpointSeq = 0;
  /** The version's epoch when this runner last read it: what it remembers is valid for that epoch only. */
  private epoch = 0;
  private streamCreated = '';
  private readonly lagGauge: Gauge | null;
  private readonly checkpointGauge: Gauge | null;

  private constructor(
    private readonly opts: ProjectionRunnerOptions,
    private readonly jsm: JetStreamManager,
    private readonly qr: QueryRunner,
    private readonly client: PoolClient,
  ) {
    this.catalog = new ProjectionCatalog(opts.dataSource);
    this.js = opts.nc.jetstream();
    this.batchSize = opts.batchSize ?? 1_000;
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
      throw new ProjectionError(
        'fenced',
        `another ${this.role()} runner of ${this.opts.projection.name} holds its lock`,
      );
    }
  }

  /** Resolves the version to write, its checkpoint and the stream identity it is bound to. */
  private async load(): Promise<void> {
    const p = this.opts.projection;
    const t = this.opts.target ?? 'live';
    const info =
      t === 'live'
        ? await this.catalog.active(p.name, this.qr)
        : await this.catalog.version(p.name, t.version, this.qr);
    if (!info)
      throw new ProjectionError(
        'no_active_version',
        `${p.name} has no ${t === 'live' ? 'active version' : `v${t.version}`}`,
      );
    if (info.shape !== projectionShape(p)) {
      throw new ProjectionError(
        'shape_changed',
        `${p.name} v${info.version} was built by another revision or table shape; run \`caseloop rebuild ${p.name}\``,
      );
    }
    this.streamCreated = await this.checkStream(info);
    this.version = info.version;
    this.checkpointSeq = info.checkpoint;
    this.epoch = info.epoch;
  }

  private async checkStream(info: VersionInfo): Promise<string> {
    let created: string;
    let lastSeq: number;
    try {
      const si = await this.jsm.streams.info(this.opts.stream);
      created = si.created;
      lastSeq = si.state.last_seq;
    } catch (e) {
      throw new ProjectionError(
        'stream_missing',
        `stream ${this.opts.stream} is not there (${(e as Error).message})`,
      );
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
  async catchUp({
    until,
    onBatch,
  }: { until?: number; onBatch?: (b: BatchOutcome) => void } = {}): Promise<number> {
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
    try {
      await this.qr.query(`select pg_advisory_unlock_all()`);
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
        startSeq: this.checkpointSeq + 1,
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

  /** Decoding happens as the messages arrive, in slices that let the batch being written go on meanwhile. */
  private fetch(waitMs: number): Promise<Fetched> {
    const reader = this.reader as BoundedStreamReader;
    const after = this.checkpointSeq;
    return reader.next(waitMs).then(
      async (all) => {
        const msgs = all.filter((m) => m.seq > after);
        if (msgs.length === 0) return { ok: null };
        const decoded: DecodedBatch = { lastSeq: (msgs[msgs.length - 1] as JsMsg).seq, events: [], dead: [] };
        for (let i = 0; i < msgs.length; i += SLICE) {
          if (i > 0) await yieldToIo();
          const part = decodeBatch(msgs.slice(i, i + SLICE));
          decoded.events.push(...part.events);
          decoded.dead.push(...part.dead);
        }
        return { ok: decoded };
      },
      (err: unknown) => ({ err }),
    );
  }

  private prepare(fetched: Promise<Fetched>): Promise<Prepared> {
    const version = this.version;
    return fetched.then(async (f): Promise<Prepared> => {
      if ('err' in f) return f;
      if (!f.ok) return { ok: null };
      try {
        const changes = await this.opts.projection.apply(f.ok.events, this.context(this.qr, version));
        // Serialised here, not at commit, and in slices: this CPU work overlaps the previous batch's write.
        const staged: StagedRows[] = [];
        for (const { spec, rows } of tablesOf(this.opts.projection, changes)) {
          const unique = dedupeByKey(spec, rows);
          const parts: string[] = [];
          for (let i = 0; i < unique.length; i += SLICE) {
            await yieldToIo();
            parts.push(copyText(spec, unique.slice(i, i + SLICE)));
          }
          if (parts.length > 0)
            staged.push({
              spec,
              text: parts.join(''),
              keyRange: spec.appendOnly ? keyRange(spec, unique) : null,
            });
        }
        return {
          ok: { version, lastSeq: f.ok.lastSeq, applied: f.ok.events.length, dead: f.ok.dead, staged },
        };
      } catch (err) {
        return { err };
      }
    });
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
    const { dead, lastSeq, staged } = batch;
    const qr = this.qr;
    let open = false;
    try {
      // A projection is derived data: an OS crash losing the last commits only means re-applying them
      // from the checkpoint, which moves in the same transaction. No need to wait for the WAL flush.
      await qr.query(`begin; set local synchronous_commit = off`);
      open = true;
      const { version, checkpoint, epoch } = await this.lockVersion();
      if (version !== this.version || version !== batch.version || epoch !== this.epoch) {
        // Readers were switched to another version (a rebuild finished), or rows of this version were
        // written outside the runner (a re-driven dead letter) and this batch was folded from remembered
        // states that may be stale: either way, drop them and go on from the checkpoint.
        await qr.query('rollback');
        open = false;
        await this.resetReader();
        await this.load();
        return null;
      }
      if (checkpoint !== this.checkpointSeq) {
        throw new ProjectionError(
          'checkpoint_moved',
          `${p.name} v${version} checkpoint moved to ${checkpoint} under this runner`,
        );
      }
      if (dead.length > 0) await this.recordDeadLetters(qr, version, dead);
      const schema = this.catalog.schema;
      const upserted: TableSpec[] = [];
      for (const { spec, text, keyRange } of staged) {
        if (keyRange && (await this.append(spec, version, text, keyRange))) continue;
        upserted.push(spec);
        const stage = stageName(spec, version);
        if (!this.stages.has(stage)) {
          await qr.query(createStageSql(schema, spec, version));
          this.stages.add(stage);
        }
        await copyIn(this.client, copyToStageSql(spec, version), text);
      }
      // Every table's upsert from its staging table and the checkpoint: one statement, one round trip.
      const upserts = upserted.map((spec, i) => `w${i} as (${upsertFromStageSql(schema, spec, version)})`);
      await qr.query(
        `${upserts.length ? `with ${upserts.join(', ')} ` : ''}update ${this.catalog.t('projection_checkpoints')}
            set seq = $3, stream = $4, stream_created = $5, updated_at = now() where projection = $1 and version = $2`,
        [p.name, version, lastSeq, this.opts.stream, this.streamCreated],
      );
      if (this.opts.beforeCommit) await this.opts.beforeCommit(lastSeq);
      await qr.query('commit');
      open = false;
      this.checkpointSeq = lastSeq;
    } catch (e) {
      if (open) await qr.query('rollback').catch(() => undefined);
      // Staging tables created inside the rolled-back transaction went with it.
      this.stages.clear();
      throw e;
    }
    const remaining = this.reader?.remaining ?? 0;
    this.lagGauge?.set({ projection: p.name }, remaining);
    this.checkpointGauge?.set({ projection: p.name }, this.checkpointSeq);
    for (const d of dead) {
      this.opts.log?.({
        level: 'warn',
        msg: 'dead letter',
        projection: p.name,
        seq: d.seq,
        subject: d.subject,
        code: d.code,
      });
    }
    return { applied: batch.applied, deadLettered: dead.length, checkpoint: this.checkpointSeq, remaining };
  }

  /**
   * COPYs rows straight into an append-only table, unless a row in their key range is already there
   * (a batch applied again): then it returns false and the caller upserts them instead. One probe of
   * the primary key; nothing else writes these keys meanwhile (this runner holds the version's lock).
   */
  private async append(
    spec: TableSpec,
    version: number,
    text: string,
    [low, high]: [number, number],
  ): Promise<boolean> {
    const key = ident(spec.key[0] as string);
    const [probe] = await this.qr.query(
      `select exists (select 1 from ${this.catalog.tableOf(spec.name, version)} where ${key} between $1 and $2) as taken`,
      [low, high],
    );
    if (probe?.taken) return false;
    await copyIn(this.client, copyIntoSql(this.catalog.schema, spec, version), text);
    return true;
  }

  /**
   * Live runners share-lock the projection's head row, so a switch (which takes it for update)
   * waits for the batch in flight and the next batch sees the new version.
   */
  private async lockVersion(): Promise<{ version: number; checkpoint: number; epoch: number }> {
    const p = this.opts.projection;
    const t = this.opts.target ?? 'live';
    const checkpoints = this.catalog.t('projection_checkpoints');
    if (t === 'live') {
      const [h] = await this.qr.query(
        `select h.active_version, c.seq, c.epoch from ${this.catalog.t('projection_heads')} h
           join ${checkpoints} c on c.projection = h.projection and c.version = h.active_version
          where h.projection = $1 for share of h`,
        [p.name],
      );
      if (!h) throw new ProjectionError('no_active_version', `${p.name} has no active version`);
      return { version: Number(h.active_version), checkpoint: Number(h.seq), epoch: Number(h.epoch) };
    }
    const [v] = await this.qr.query(
      `select v.status, c.seq, c.epoch from ${this.catalog.t('projection_versions')} v
         join ${checkpoints} c on c.projection = v.projection and c.version = v.version
        where v.projection = $1 and v.version = $2 for share of v`,
      [p.name, t.version],
    );
    if (!v || v.status !== 'building') {
      throw new ProjectionError('fenced', `${p.name} v${t.version} is ${v?.status ?? 'gone'}, not building`);
    }
    return { version: t.version, checkpoint: Number(v.seq), epoch: Number(v.epoch) };
  }

  private context(qr: QueryRunner, version: number): ApplyContext {
    return contextFor(this.catalog, qr, version, this.memo);
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

export function contextFor(
  catalog: ProjectionCatalog,
  qr: Sql,
  version: number,
  memo: Map<string, unknown> = new Map(),
): ApplyContext {
  return {
    memo,
    table: (name) => catalog.tableOf(name, version),
    query: async <T extends Row = Row>(sql: string, params?: unknown[]) =>
      (await qr.query(sql, params)) as T[],
  };
}

/** The projection's declared tables with the rows `apply` returned for them. */
function tablesOf(p: Projection, changes: RowChanges) {
  return Object.entries(changes).map(([table, rows]) => {
    const spec = p.tables.find((t) => t.name === table);
    if (!spec) throw new Error(`${p.name} returned rows for ${table}, which it does not declare`);
    return { spec, rows };
  });
}

export async function writeChanges(
  catalog: ProjectionCatalog,
  p: Projection,
  qr: Sql,
  version: number,
  changes: RowChanges,
): Promise<void> {
  const stmt = batchWriteStatement(catalog.schema, tablesOf(p, changes), version);
  if (stmt) await qr.query(stmt.sql, stmt.params);
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

/** Streams `text` into a `copy … from stdin` on the connection; resolves once Postgres has taken it all. */
export function copyIn(client: PoolClient, sql: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(sql));
    stream.once('error', reject);
    stream.once('finish', resolve);
    stream.end(text);
  });
}

/**
 * Messages decoded, or rows serialised, between two turns of the event loop: while the runner
 * prepares the next batch, the statements of the batch being written need the loop to go on.
 */
const SLICE = 500;

/** The key range of rows with one numeric key; null otherwise (such rows take the staged upsert). */
function keyRange(spec: TableSpec, rows: readonly Row[]): [number, number] | null {
  if (spec.key.length !== 1) return null;
  const k = spec.key[0] as string;
  let low = Infinity;
  let high = -Infinity;
  for (const row of rows) {
    const v = row[k];
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) return null;
    if (v < low) low = v;
    if (v > high) high = v;
  }
  return rows.length > 0 ? [low, high] : null;
}
const yieldToIo = (): Promise<void> => new Promise((r) => setImmediate(r));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
