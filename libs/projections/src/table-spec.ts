/**
 * A projection table described once: its DDL, its upsert and its versioned name all come from here,
 * so a rebuild can create `<name>_v<N>` beside the live version without a hand-written copy.
 */
export type ColumnType = 'text' | 'bigint' | 'integer' | 'boolean' | 'jsonb' | 'timestamptz';

export interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable?: boolean;
}

export interface TableSpec {
  /** The name readers use (a view over the active version). */
  readonly name: string;
  readonly columns: readonly ColumnSpec[];
  /** The conflict key of the upsert: the primary key. */
  readonly key: readonly string[];
  /** Secondary indexes, created after a rebuild has caught up: `[name suffix, column list]`. */
  readonly indexes?: readonly (readonly [string, string])[];
}

export type Row = Record<string, unknown>;

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;

export function ident(name: string): string {
  if (!IDENT.test(name)) throw new Error(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  return `"${name}"`;
}

export const qualified = (schema: string, table: string): string => `${ident(schema)}.${ident(table)}`;

export const versionedName = (table: string, version: number): string => `${table}_v${version}`;

export function createTableSql(schema: string, spec: TableSpec, version: number): string {
  const cols = spec.columns.map((c) => `${ident(c.name)} ${c.type}${c.nullable ? '' : ' not null'}`);
  cols.push(`primary key (${spec.key.map(ident).join(', ')})`);
  return `create table if not exists ${qualified(schema, versionedName(spec.name, version))} (\n  ${cols.join(',\n  ')}\n)`;
}

export function createIndexSql(schema: string, spec: TableSpec, version: number): string[] {
  const table = versionedName(spec.name, version);
  return (spec.indexes ?? []).map(
    ([suffix, columns]) =>
      `create index if not exists ${ident(`${table}_${suffix}`)} on ${qualified(schema, table)} (${columns
        .split(',')
        .map((c) => ident(c.trim()))
        .join(', ')})`,
  );
}

/** A stable fingerprint of a table's shape: a version built for one shape is never written with another. */
export const shapeOf = (spec: TableSpec): string =>
  `${spec.name}(${spec.columns.map((c) => `${c.name}:${c.type}${c.nullable ? '?' : ''}`).join(',')};key=${spec.key.join(',')};idx=${(
    spec.indexes ?? []
  )
    .map(([s, c]) => `${s}:${c}`)
    .join(',')})`;

/** One statement cannot update a row twice: keep the last change per key, in batch order. */
export function dedupeByKey(spec: TableSpec, rows: readonly Row[]): Row[] {
  const byKey = new Map<string, Row>();
  for (const row of rows) {
    const key = spec.key.map((k) => String(row[k])).join('\u0000');
    byKey.delete(key);
    byKey.set(key, row);
  }
  return [...byKey.values()];
}

/** Postgres allows 65,535 bind parameters per statement. */
const MAX_PARAMS = 60_000;

/**
 * Multi-row `insert … on conflict (key) do update`: one round trip per few thousand rows,
 * never one per row. Values are bound (jsonb as its JSON text), never interpolated.
 */
export function upsertStatements(schema: string, spec: TableSpec, version: number, rows: readonly Row[]): { sql: string; params: unknown[] }[] {
  const unique = dedupeByKey(spec, rows);
  if (unique.length === 0) return [];
  const cols = spec.columns;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / cols.length));
  const target = qualified(schema, versionedName(spec.name, version));
  const colList = cols.map((c) => ident(c.name)).join(', ');
  const updates = cols.filter((c) => !spec.key.includes(c.name));
  const onConflict =
    updates.length === 0
      ? `on conflict (${spec.key.map(ident).join(', ')}) do nothing`
      : `on conflict (${spec.key.map(ident).join(', ')}) do update set ${updates
          .map((c) => `${ident(c.name)} = excluded.${ident(c.name)}`)
          .join(', ')}`;
  const out: { sql: string; params: unknown[] }[] = [];
  for (let start = 0; start < unique.length; start += perStatement) {
    const chunk = unique.slice(start, start + perStatement);
    const params: unknown[] = [];
    const tuples = chunk.map((row) => {
      const slots = cols.map((c) => {
        params.push(toParam(c, row[c.name], spec.name));
        return c.type === 'jsonb' ? `$${params.length}::jsonb` : `$${params.length}`;
      });
      return `(${slots.join(', ')})`;
    });
    out.push({ sql: `insert into ${target} (${colList}) values ${tuples.join(', ')} ${onConflict}`, params });
  }
  return out;
}

function toParam(col: ColumnSpec, value: unknown, table: string): unknown {
  if (value === undefined || value === null) {
    if (!col.nullable) throw new Error(`${table}.${col.name} may not be null`);
    return null;
  }
  if (col.type === 'jsonb') return JSON.stringify(value);
  return value;
}
