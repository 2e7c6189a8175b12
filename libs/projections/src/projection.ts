import type { RecordedEvent } from '@caseloop/contracts';
import { Row, shapeOf, TableSpec } from './table-spec';

/** Reads inside the batch's transaction, against the version being written. */
export interface ApplyContext {
  /** `table('cases')` → the qualified name of that table in the version being written. */
  table(name: string): string;
  query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * State the projection may carry from one batch to the next of the same runner (e.g. the folded
   * states it just wrote), so the next batch need not read them back. The runner empties it whenever
   * a batch fails, the runner repositions or the version changes; it never outlives the runner's lock.
   */
  memo: Map<string, unknown>;
}

/** Rows to upsert, per table name. The runner de-duplicates by key and writes multi-row statements. */
export type RowChanges = Record<string, Row[]>;

/**
 * A read model: tables plus a pure-ish `apply` from a batch of events (in stream order) to row changes.
 * `apply` may read current rows through the context (one query per batch, never one per event) and must
 * be idempotent: the same batch applied twice yields the same rows.
 */
export interface Projection {
  readonly name: string;
  /** Bump when `apply` changes meaning: a running version built by other logic is refused, a rebuild is due. */
  readonly revision: number;
  readonly tables: readonly TableSpec[];
  apply(batch: readonly RecordedEvent[], ctx: ApplyContext): Promise<RowChanges>;
}

/** Identifies the shape and logic a version was built with. */
export const projectionShape = (p: Projection): string =>
  `${p.name}@${p.revision}:${p.tables.map(shapeOf).join('|')}`;
