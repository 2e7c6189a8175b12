import { decodeEvent } from '@caseloop/contracts';
import { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { ProjectionCatalog } from './projection-catalog';
import { ProjectionError } from './projection.errors';
import { Projection } from './projection';
import { contextFor, writeChanges } from './runner-prepare';

export interface DeadLetterRow {
  projection: string;
  version: number;
  seq: number;
  subject: string;
  code: string;
  error: string;
  recordedAt: string;
  redrivenAt: string | null;
}

/** Dead letters of the versions readers see (or of every version with `all`). */
export async function listProjectionDeadLetters(
  ds: DataSource,
  { all = false, projection }: { all?: boolean; projection?: string } = {},
): Promise<DeadLetterRow[]> {
  const catalog = new ProjectionCatalog(ds);
  const rows = await ds.query(
    `select d.projection, d.version, d.seq, d.subject, d.code, d.error, d.recorded_at, d.redriven_at
       from ${catalog.t('projection_dead_letters')} d
       left join ${catalog.t('projection_heads')} h on h.projection = d.projection
      where ($1::boolean or d.version = h.active_version) and ($2::text is null or d.projection = $2)
      order by d.projection, d.seq`,
    [all, projection ?? null],
  );
  return rows.map((r: Record<string, unknown>) => ({
    projection: String(r.projection),
    version: Number(r.version),
    seq: Number(r.seq),
    subject: String(r.subject),
    code: String(r.code),
    error: String(r.error),
    recordedAt: (r.recorded_at as Date).toISOString(),
    redrivenAt: r.redriven_at ? (r.redriven_at as Date).toISOString() : null,
  }));
}

/**
 * Re-reads a dead-lettered message from the stream and applies it to the active version (after the
 * reader has been upgraded, say). The head row is held for update, so the live runner pauses between
 * batches meanwhile; the projection itself handles the event arriving late (the case view re-folds
 * the case from its timeline). The checkpoint does not move; its epoch does, so a live runner drops the
 * folded states it remembers and reads the re-driven rows before its next write.
 */
export async function redriveProjectionDeadLetter(
  deps: { dataSource: DataSource; nc: NatsConnection; stream: string },
  p: Projection,
  seq: number,
): Promise<void> {
  const ds = deps.dataSource;
  const catalog = new ProjectionCatalog(ds);
  const jsm = await deps.nc.jetstreamManager();
  const qr = ds.createQueryRunner();
  try {
    await qr.startTransaction();
    const [head] = await qr.query(
      `select active_version from ${catalog.t('projection_heads')} where projection = $1 for update`,
      [p.name],
    );
    if (!head) throw new ProjectionError('no_active_version', `${p.name} has no active version`);
    const version = Number(head.active_version);
    const [dl] = await qr.query(
      `select seq from ${catalog.t('projection_dead_letters')} where projection = $1 and version = $2 and seq = $3 and redriven_at is null for update`,
      [p.name, version, seq],
    );
    if (!dl)
      throw new ProjectionError(
        'not_dead_lettered',
        `seq ${seq} is not an open dead letter of ${p.name} v${version}`,
      );
    const msg = await jsm.streams.getMessage(deps.stream, { seq });
    let event;
    try {
      event = decodeEvent(msg.subject, msg.data, msg.seq);
    } catch (e) {
      throw new ProjectionError('still_undecodable', (e as Error).message);
    }
    const changes = await p.apply([event], contextFor(catalog, qr, version));
    await writeChanges(catalog, p, qr, version, changes);
    await qr.query(
      `update ${catalog.t('projection_dead_letters')} set redriven_at = now() where projection = $1 and version = $2 and seq = $3`,
      [p.name, version, seq],
    );
    // The version's rows changed outside its runner: a live runner folding from memory must read them again.
    await qr.query(
      `update ${catalog.t('projection_checkpoints')} set epoch = epoch + 1 where projection = $1 and version = $2`,
      [p.name, version],
    );
    await qr.commitTransaction();
  } catch (e) {
    if (qr.isTransactionActive) await qr.rollbackTransaction();
    throw e;
  } finally {
    await qr.release();
  }
}
