import { ProjectionCatalog, Sql } from './projection-catalog';
import { ApplyContext, Projection, RowChanges } from './projection';
import { DeadLetter } from './runner-dead-letters';
import { Fetched, SLICE, yieldToIo } from './runner-fetch';
import { batchWriteStatement, copyText, dedupeByKey, Row, TableSpec } from './table-spec';

/** One table's rows of a batch in COPY's text format. */
export interface StagedRows {
  spec: TableSpec;
  text: string;
  /** For an append-only table with one numeric key: the lowest and highest key of these rows. */
  keyRange: [number, number] | null;
}

/** A batch applied in memory, ready to write: its rows already serialised for COPY. */
export interface PreparedBatch {
  version: number;
  lastSeq: number;
  applied: number;
  dead: DeadLetter[];
  staged: StagedRows[];
}

export type Prepared = { ok: PreparedBatch | null } | { err: unknown };

/**
 * Applies a fetched batch to the projection in memory (`ctx` reads the version's rows and carries
 * the projection's memo) and serialises the rows for COPY. Serialised here, not at commit, and in
 * slices: this CPU work overlaps the previous batch's write. A failure resolves to `{ err }`.
 */
export function prepareBatch(
  fetched: Promise<Fetched>,
  p: Projection,
  version: number,
  ctx: () => ApplyContext,
): Promise<Prepared> {
  return fetched.then(async (f): Promise<Prepared> => {
    if ('err' in f) return f;
    if (!f.ok) return { ok: null };
    try {
      const changes = await p.apply(f.ok.events, ctx());
      const staged: StagedRows[] = [];
      for (const { spec, rows } of tablesOf(p, changes)) {
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
