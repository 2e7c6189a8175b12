import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { QueryRunner } from 'typeorm';
import { ProjectionCatalog } from './projection-catalog';
import { ProjectionError } from './projection.errors';
import { Projection } from './projection';
import { recordDeadLetters } from './runner-dead-letters';
import { lockVersion, RunnerTarget, VersionBinding } from './runner-fence';
import { PreparedBatch } from './runner-prepare';
import {
  copyIntoSql,
  copyToStageSql,
  createStageSql,
  ident,
  stageName,
  TableSpec,
  upsertFromStageSql,
} from './table-spec';

export interface BatchWriterOptions {
  projection: Projection;
  stream: string;
  target: RunnerTarget;
  beforeCommit?: (lastSeq: number) => Promise<void> | void;
}

/**
 * `committed`: the batch's rows and its checkpoint are in. `stale`: readers were switched to another
 * version, or the version's rows were written outside the runner; the transaction was rolled back and
 * the runner must bind its version again and go on from the checkpoint.
 */
export type WriteResult = 'committed' | 'stale';

/**
 * Writes prepared batches through the runner's connection, each batch with its dead letters and its
 * checkpoint in one Postgres transaction.
 */
export class BatchWriter {
  /** Staging tables created on this connection (temporary: they live as long as it). */
  private readonly stages = new Set<string>();

  constructor(
    private readonly qr: QueryRunner,
    private readonly client: PoolClient,
    private readonly catalog: ProjectionCatalog,
    private readonly opts: BatchWriterOptions,
  ) {}

  async write(batch: PreparedBatch, bound: VersionBinding): Promise<WriteResult> {
    const p = this.opts.projection;
    const { dead, lastSeq, staged } = batch;
    const qr = this.qr;
    let open = false;
    try {
      // A projection is derived data: an OS crash losing the last commits only means re-applying them
      // from the checkpoint, which moves in the same transaction. No need to wait for the WAL flush.
      await qr.query(`begin; set local synchronous_commit = off`);
      open = true;
      const { version, checkpoint, epoch } = await lockVersion(qr, this.catalog, p.name, this.opts.target);
      if (version !== bound.version || version !== batch.version || epoch !== bound.epoch) {
        // Readers were switched to another version (a rebuild finished), or rows of this version were
        // written outside the runner (a re-driven dead letter) and this batch was folded from remembered
        // states that may be stale: either way, drop them and go on from the checkpoint.
        await qr.query('rollback');
        open = false;
        return 'stale';
      }
      if (checkpoint !== bound.checkpoint) {
        throw new ProjectionError(
          'checkpoint_moved',
          `${p.name} v${version} checkpoint moved to ${checkpoint} under this runner`,
        );
      }
      if (dead.length > 0) await recordDeadLetters(qr, this.catalog, p.name, version, dead);
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
        [p.name, version, lastSeq, this.opts.stream, bound.streamCreated],
      );
      if (this.opts.beforeCommit) await this.opts.beforeCommit(lastSeq);
      await qr.query('commit');
      open = false;
      return 'committed';
    } catch (e) {
      if (open) await qr.query('rollback').catch(() => undefined);
      // Staging tables created inside the rolled-back transaction went with it.
      this.stages.clear();
      throw e;
    }
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
