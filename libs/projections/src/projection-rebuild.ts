import { NatsConnection } from 'nats';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { caseViewProjection } from './case-view/case-view.projection';
import { auditCase } from './case-view/case-audit';
import { ProjectionCatalog } from './projection-catalog';
import { ProjectionError } from './projection.errors';
import { Projection, projectionShape } from './projection';
import { ident } from './table-spec';
import { BatchOutcome, ProjectionRunner } from './projection-runner';

/** Events per transaction while rebuilding (measured on 2 cores: 5,000 beat 2,000 and 10,000). */
export const REBUILD_BATCH = 5_000;

export type RebuildPhase = 'catching_up' | 'indexing' | 'verifying' | 'switching' | 'retiring' | 'done';

export interface RebuildProgress {
  phase: RebuildPhase;
  version: number;
  checkpoint: number;
  target: number;
}

export interface RebuildOptions {
  dataSource: DataSource;
  nc: NatsConnection;
  stream: string;
  namespace: string;
  projection: Projection;
  batchSize?: number;
  /** Cases re-folded from the stream and compared with the new version before the switch. */
  sampleSize?: number;
  /** Keep the retired version's tables (default: drop them after the switch). */
  keepOld?: boolean;
  onProgress?: (p: RebuildProgress) => void;
  registry?: Registry;
  /** Stop after this many batches (leaves the version building; the next rebuild resumes it). */
  maxBatches?: number;
}

export interface TableComparison {
  table: string;
  rebuilt: number;
  live: number;
  /** Rows in one version and not (identically) in the other. */
  onlyRebuilt: number;
  onlyLive: number;
}

export interface RebuildReport {
  projection: string;
  version: number;
  previous: number | null;
  resumed: boolean;
  fromCheckpoint: number;
  checkpoint: number;
  liveCheckpoint: number;
  deadLetters: number;
  tables: TableComparison[];
  samples: { caseId: string; drift: number }[];
  switched: boolean;
}

/**
 * Builds a new version of a projection beside the live one, from sequence 1, resumable from its own
 * checkpoint; adds the indexes once caught up; verifies it; then points the reader views at it in
 * one transaction and retires the old version. The live version is never truncated or rewritten.
 */
export async function rebuildProjection(opts: RebuildOptions): Promise<RebuildReport> {
  const p = opts.projection;
  const ds = opts.dataSource;
  const catalog = new ProjectionCatalog(ds);
  const live = await catalog.ensure(p);
  const all = await catalog.versions(p.name);
  let building = all.find((v) => v.status === 'building');
  if (building && building.shape !== projectionShape(p)) {
    // Started by another revision of the projection: useless now. Its tables go, its history stays.
    await ds.query(
      `update ${catalog.t('projection_versions')} set status = 'retired', retired_at = now() where projection = $1 and version = $2`,
      [p.name, building.version],
    );
    await catalog.dropVersionTables(p, building.version);
    building = undefined;
  }
  const resumed = building !== undefined;
  let version: number;
  if (building) {
    version = building.version;
  } else {
    version = Math.max(0, ...all.map((v) => v.version)) + 1;
    await ds.transaction(async (m) => catalog.createVersion(m, p, version, { indexes: false }));
  }

  const runner = await ProjectionRunner.start({
    dataSource: ds,
    nc: opts.nc,
    stream: opts.stream,
    projection: p,
    // Larger than a live batch: a case touched many times in a batch is written once, and the fixed cost per transaction shrinks.
    batchSize: opts.batchSize ?? REBUILD_BATCH,
    target: { version },
    ...(opts.registry ? { registry: opts.registry } : {}),
  });
  const fromCheckpoint = runner.checkpoint;
  const report: RebuildReport = {
    projection: p.name,
    version,
    previous: live.version,
    resumed,
    fromCheckpoint,
    checkpoint: fromCheckpoint,
    liveCheckpoint: live.checkpoint,
    deadLetters: 0,
    tables: [],
    samples: [],
    switched: false,
  };
  try {
    const jsm = await opts.nc.jetstreamManager();
    const target = (await jsm.streams.info(opts.stream)).state.last_seq;
    const progress = (phase: RebuildPhase) =>
      opts.onProgress?.({ phase, version, checkpoint: runner.checkpoint, target });
    progress('catching_up');
    let batches = 0;
    while (runner.checkpoint < target) {
      const outcome: BatchOutcome | null = await runner.step();
      if (outcome) progress('catching_up');
      if (opts.maxBatches !== undefined && ++batches >= opts.maxBatches) {
        report.checkpoint = runner.checkpoint;
        return report;
      }
    }
    progress('indexing');
    await catalog.createIndexes(p, version);
    await ds.query(
      `update ${catalog.t('projection_versions')} set caught_up_at = now() where projection = $1 and version = $2`,
      [p.name, version],
    );

    progress('verifying');
    const current = await catalog.active(p.name);
    report.liveCheckpoint = current?.checkpoint ?? 0;
    report.previous = current?.version ?? null;
    if (current) report.tables = await compareVersions(ds, catalog, p, version, current.version);
    if (p.name === caseViewProjection.name)
      report.samples = await sampleCases(opts, catalog, version, opts.sampleSize ?? 20);
    const drifted = report.samples.filter((s) => s.drift > 0);
    if (drifted.length > 0) {
      throw new ProjectionError(
        'verification_failed',
        `${p.name} v${version}: re-folding ${drifted.map((s) => s.caseId).join(', ')} from the stream disagrees with the rebuilt rows`,
      );
    }

    progress('switching');
    const qr = ds.createQueryRunner();
    try {
      await qr.startTransaction();
      // Holding the head row stops the live runner between batches until the views point at the new version.
      const [head] = await qr.query(
        `select active_version from ${catalog.t('projection_heads')} where projection = $1 for update`,
        [p.name],
      );
      const previous = head ? Number(head.active_version) : null;
      await runner.catchUp();
      report.checkpoint = runner.checkpoint;
      report.deadLetters = await countConsistency(catalog, p, version, runner.checkpoint, qr);
      await catalog.activate(qr, p, version, previous);
      await qr.commitTransaction();
      report.previous = previous;
      report.switched = true;
    } catch (e) {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      throw e;
    } finally {
      await qr.release();
    }
    if (!opts.keepOld && report.previous !== null && report.previous !== version) {
      progress('retiring');
      await catalog.dropVersionTables(p, report.previous);
    }
    progress('done');
    return report;
  } finally {
    await runner.close();
  }
}

/**
 * Every sequence up to the checkpoint is accounted for: a timeline row or a dead letter.
 * (The case view's timeline has one row per event; other projections skip this check.)
 */
async function countConsistency(
  catalog: ProjectionCatalog,
  p: Projection,
  version: number,
  checkpoint: number,
  qr: { query: (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>> },
): Promise<number> {
  const [dl] = await qr.query(
    `select count(*)::int as n from ${catalog.t('projection_dead_letters')} where projection = $1 and version = $2 and seq <= $3`,
    [p.name, version, checkpoint],
  );
  const dead = Number(dl?.n ?? 0);
  if (!p.tables.some((t) => t.name === 'timeline')) return dead;
  const [tl] = await qr.query(
    `select count(*)::int as n, coalesce(min(seq), 0)::bigint as first from ${catalog.tableOf('timeline', version)}`,
  );
  const rows = Number(tl?.n ?? 0);
  const [dlFirst] = await qr.query(
    `select coalesce(min(seq), 0)::bigint as first from ${catalog.t('projection_dead_letters')} where projection = $1 and version = $2`,
    [p.name, version],
  );
  const firsts = [Number(tl?.first ?? 0), Number(dlFirst?.first ?? 0)].filter((n) => n > 0);
  const first = firsts.length ? Math.min(...firsts) : checkpoint + 1;
  const expected = checkpoint - first + 1;
  if (rows + dead !== expected) {
    throw new ProjectionError(
      'verification_failed',
      `${p.name} v${version}: ${rows} timeline rows + ${dead} dead letters ≠ ${expected} sequences from ${first} to ${checkpoint}`,
    );
  }
  return dead;
}

/**
 * Row counts and differences per table. Both versions are keyed by the same primary key, so a row
 * is "only in one version" when its key is missing from the other or the rows under that key differ:
 * the same counts as `except all` on whole rows, from a hash join on the key instead of sorting every
 * row (jsonb included) of both versions.
 */
async function compareVersions(
  ds: DataSource,
  catalog: ProjectionCatalog,
  p: Projection,
  built: number,
  live: number,
): Promise<TableComparison[]> {
  // One query per table, side by side on the pool's connections.
  return Promise.all(
    p.tables.map(async (spec): Promise<TableComparison> => {
      const a = catalog.tableOf(spec.name, built);
      const b = catalog.tableOf(spec.name, live);
      const on = spec.key.map((k) => `a.${ident(k)} = b.${ident(k)}`).join(' and ');
      const inA = `a.${ident(spec.key[0] as string)} is not null`;
      const inB = `b.${ident(spec.key[0] as string)} is not null`;
      const [row] = await ds.query(`select
          count(*) filter (where ${inA})::int as rebuilt,
          count(*) filter (where ${inB})::int as live,
          count(*) filter (where ${inA} and (not ${inB} or row(a.*) is distinct from row(b.*)))::int as only_rebuilt,
          count(*) filter (where ${inB} and (not ${inA} or row(a.*) is distinct from row(b.*)))::int as only_live
        from ${a} a full join ${b} b on ${on}`);
      return {
        table: spec.name,
        rebuilt: Number(row?.rebuilt),
        live: Number(row?.live),
        onlyRebuilt: Number(row?.only_rebuilt),
        onlyLive: Number(row?.only_live),
      };
    }),
  );
}

/** Random cases of the new version, each re-folded from the stream and diffed like `caseloop audit`. */
async function sampleCases(opts: RebuildOptions, catalog: ProjectionCatalog, version: number, n: number) {
  const ids: { case_id: string }[] = await opts.dataSource.query(
    `select case_id from ${catalog.tableOf('cases', version)} order by random() limit $1`,
    [n],
  );
  const jsm = await opts.nc.jetstreamManager({ checkAPI: false });
  const deps = {
    dataSource: opts.dataSource,
    nc: opts.nc,
    jsm,
    stream: opts.stream,
    namespace: opts.namespace,
    version,
  };
  const out: { caseId: string; drift: number }[] = [];
  for (const { case_id } of ids)
    out.push({ caseId: case_id, drift: (await auditCase(deps, case_id)).drift.length });
  return out;
}
