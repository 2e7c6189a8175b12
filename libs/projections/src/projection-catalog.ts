import { DataSource, QueryRunner } from 'typeorm';
import { schemaOf } from './data-source';
import { ProjectionError } from './projection.errors';
import { Projection, projectionShape } from './projection';
import { createIndexSql, createTableSql, ident, qualified, versionedName } from './table-spec';

export type VersionStatus = 'building' | 'active' | 'retired';

export interface VersionInfo {
  projection: string;
  version: number;
  status: VersionStatus;
  shape: string;
  checkpoint: number;
  stream: string | null;
  streamCreated: string | null;
  /** Writes to this version from outside its runner (re-driven dead letters), counted. */
  epoch: number;
}

/** Anything that runs SQL: a query runner (inside its transaction) or the data source. */
export type Sql = Pick<QueryRunner, 'query'> | DataSource;

/**
 * The runtime tables (heads, versions, checkpoints) for every projection in one schema:
 * which version readers see, and the DDL that creates, indexes, switches and retires versions.
 */
export class ProjectionCatalog {
  readonly schema: string;

  constructor(private readonly ds: DataSource) {
    this.schema = schemaOf(ds);
  }

  t(table: string): string {
    return qualified(this.schema, table);
  }

  /**
   * Makes sure the projection has an active version: on a fresh database, version 1 with its
   * indexes and reader views. Idempotent and safe to race (a transaction-scoped advisory lock).
   */
  async ensure(p: Projection): Promise<VersionInfo> {
    const qr = this.ds.createQueryRunner();
    try {
      await qr.startTransaction();
      await qr.query(`select pg_advisory_xact_lock(hashtextextended($1, 0))`, [
        `caseloop/${this.schema}/${p.name}/catalog`,
      ]);
      const head = await qr.query(
        `select active_version from ${this.t('projection_heads')} where projection = $1`,
        [p.name],
      );
      if (head.length === 0) {
        await this.createVersion(qr, p, 1, { indexes: true });
        await this.activate(qr, p, 1, null);
      }
      await qr.commitTransaction();
    } catch (e) {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      throw e;
    } finally {
      await qr.release();
    }
    const active = await this.active(p.name);
    if (!active) throw new ProjectionError('no_active_version', `${p.name} has no active version`);
    return active;
  }

  async active(projection: string, sql: Sql = this.ds): Promise<VersionInfo | null> {
    const rows = await sql.query(
      `select v.projection, v.version, v.status, v.shape, c.seq, c.stream, c.stream_created, c.epoch
         from ${this.t('projection_heads')} h
         join ${this.t('projection_versions')} v on v.projection = h.projection and v.version = h.active_version
         join ${this.t('projection_checkpoints')} c on c.projection = v.projection and c.version = v.version
        where h.projection = $1`,
      [projection],
    );
    return rows[0] ? toInfo(rows[0]) : null;
  }

  async version(projection: string, version: number, sql: Sql = this.ds): Promise<VersionInfo | null> {
    const rows = await sql.query(
      `select v.projection, v.version, v.status, v.shape, c.seq, c.stream, c.stream_created, c.epoch
         from ${this.t('projection_versions')} v
         join ${this.t('projection_checkpoints')} c on c.projection = v.projection and c.version = v.version
        where v.projection = $1 and v.version = $2`,
      [projection, version],
    );
    return rows[0] ? toInfo(rows[0]) : null;
  }

  async versions(projection: string): Promise<VersionInfo[]> {
    const rows = await this.ds.query(
      `select v.projection, v.version, v.status, v.shape, c.seq, c.stream, c.stream_created, c.epoch
         from ${this.t('projection_versions')} v
         join ${this.t('projection_checkpoints')} c on c.projection = v.projection and c.version = v.version
        where v.projection = $1 order by v.version`,
      [projection],
    );
    return rows.map(toInfo);
  }

  /** Tables without secondary indexes unless asked: a rebuild adds them after it has caught up. */
  async createVersion(
    sql: Sql,
    p: Projection,
    version: number,
    { indexes }: { indexes: boolean },
  ): Promise<void> {
    for (const spec of p.tables) {
      await sql.query(createTableSql(this.schema, spec, version));
      if (indexes) for (const ddl of createIndexSql(this.schema, spec, version)) await sql.query(ddl);
    }
    await sql.query(
      `insert into ${this.t('projection_versions')} (projection, version, status, shape) values ($1, $2, 'building', $3)`,
      [p.name, version, projectionShape(p)],
    );
    await sql.query(
      `insert into ${this.t('projection_checkpoints')} (projection, version, seq) values ($1, $2, 0)`,
      [p.name, version],
    );
  }

  /** Builds a version's secondary indexes side by side, on as many connections as the pool lends (they share the table's lock). */
  async createIndexes(p: Projection, version: number): Promise<void> {
    await Promise.all(
      p.tables.flatMap((spec) => createIndexSql(this.schema, spec, version)).map((ddl) => this.ds.query(ddl)),
    );
  }

  /**
   * Points the reader views at `version` and marks it active; the caller's transaction makes the swap
   * atomic for readers (DDL is transactional in Postgres).
   */
  async activate(sql: Sql, p: Projection, version: number, previous: number | null): Promise<void> {
    for (const spec of p.tables) {
      await sql.query(`drop view if exists ${this.t(spec.name)}`);
      await sql.query(
        `create view ${this.t(spec.name)} as select * from ${this.t(versionedName(spec.name, version))}`,
      );
    }
    if (previous !== null) {
      await sql.query(
        `update ${this.t('projection_versions')} set status = 'retired', retired_at = now() where projection = $1 and version = $2`,
        [p.name, previous],
      );
    }
    await sql.query(
      `update ${this.t('projection_versions')} set status = 'active', activated_at = now() where projection = $1 and version = $2`,
      [p.name, version],
    );
    await sql.query(
      `insert into ${this.t('projection_heads')} (projection, active_version) values ($1, $2)
       on conflict (projection) do update set active_version = excluded.active_version, switched_at = now()`,
      [p.name, version],
    );
  }

  /** Drops a retired version's tables. Its catalogue rows stay as history. */
  async dropVersionTables(p: Projection, version: number): Promise<void> {
    const info = await this.version(p.name, version);
    if (info?.status === 'active')
      throw new ProjectionError('version_active', `${p.name} v${version} is active`);
    for (const spec of p.tables)
      await this.ds.query(`drop table if exists ${this.t(versionedName(spec.name, version))}`);
  }

  /** The qualified name of a projection table in one version. */
  tableOf(table: string, version: number): string {
    return qualified(this.schema, versionedName(table, version));
  }

  quoteSchema(): string {
    return ident(this.schema);
  }
}

function toInfo(r: Record<string, unknown>): VersionInfo {
  return {
    projection: String(r.projection),
    version: Number(r.version),
    status: r.status as VersionStatus,
    shape: String(r.shape),
    checkpoint: Number(r.seq),
    stream: (r.stream as string | null) ?? null,
    streamCreated: (r.stream_created as string | null) ?? null,
    epoch: Number(r.epoch ?? 0),
  };
}
