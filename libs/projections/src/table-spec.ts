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
  /**
   * Rows are only ever added (one per stream sequence, say), so a batch is COPYed straight into the
   * table; only a batch applied again (its keys already there) takes the staged upsert instead.
   */
  readonly appendOnly?: boolean;
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

/** `on conflict (key) do update set <every other column> = excluded.<column>` (or `do nothing`). */
function onConflict(spec: TableSpec): string {
  const updates = spec.columns.filter((c) => !spec.key.includes(c.name));
  const conflict = `on conflict (${spec.key.map(ident).join(', ')})`;
  return updates.length === 0
    ? `${conflict} do nothing`
    : `${conflict} do update set ${updates.map((c) => `${ident(c.name)} = excluded.${ident(c.name)}`).join(', ')}`;
}

/**
 * The upsert of one table for one batch: the rows travel as a single JSON array parameter that
 * Postgres expands with `json_populate_recordset` into the table's own row type — one bind value
 * (a multi-row VALUES list with one parameter per cell costs Postgres far more to parse and bind),
 * and values are never interpolated into SQL. `param` is the placeholder to use (`$1`, `$2`, …).
 */
export function upsertSql(schema: string, spec: TableSpec, version: number, param: string): string {
  const target = qualified(schema, versionedName(spec.name, version));
  const cols = spec.columns.map((c) => ident(c.name)).join(', ');
  return `insert into ${target} (${cols}) select ${cols} from json_populate_recordset(null::${target}, ${param}::json) ${onConflict(spec)}`;
}

/** The JSON parameter for `upsertSql`: rows de-duplicated by key (last wins), checked for nulls. */
export function upsertPayload(spec: TableSpec, rows: readonly Row[]): string | null {
  const unique = dedupeByKey(spec, rows);
  if (unique.length === 0) return null;
  for (const row of unique) checkRow(spec, row);
  return JSON.stringify(unique);
}

/**
 * Every table's upsert for one batch, plus an optional final statement (the checkpoint update), as
 * ONE statement of data-modifying CTEs: a batch costs one round trip however many tables it touches.
 */
export function batchWriteStatement(
  schema: string,
  tables: readonly { spec: TableSpec; rows: readonly Row[] }[],
  version: number,
  final?: { sql: (firstParam: number) => string; params: unknown[] },
): { sql: string; params: unknown[] } | null {
  const params: unknown[] = [];
  const ctes: string[] = [];
  for (const { spec, rows } of tables) {
    const payload = upsertPayload(spec, rows);
    if (payload === null) continue;
    params.push(payload);
    ctes.push(`w${ctes.length} as (${upsertSql(schema, spec, version, `$${params.length}`)})`);
  }
  if (ctes.length === 0 && !final) return null;
  const tail = final ? final.sql(params.length + 1) : 'select 1';
  if (final) params.push(...final.params);
  return { sql: ctes.length ? `with ${ctes.join(', ')} ${tail}` : tail, params };
}

function checkRow(spec: TableSpec, row: Row): void {
  for (const c of spec.columns) {
    const v = row[c.name];
    if ((v === undefined || v === null) && !c.nullable)
      throw new Error(`${spec.name}.${c.name} may not be null`);
  }
}

/**
 * The COPY route, for large batches: `json_populate_recordset` parses every row's JSON again in
 * Postgres (about 10 µs a timeline row, 40 µs a case row with its folded state, measured here),
 * while COPY's text format is read several times faster. The rows go into a temporary staging
 * table of the connection (emptied at every commit) and are upserted from there, so a re-applied
 * batch still overwrites instead of failing on its key.
 */
export const stageName = (spec: TableSpec, version: number): string =>
  `stage_${versionedName(spec.name, version)}`;

export function createStageSql(schema: string, spec: TableSpec, version: number): string {
  const target = qualified(schema, versionedName(spec.name, version));
  return `create temp table if not exists ${ident(stageName(spec, version))} (like ${target} including defaults) on commit delete rows`;
}

export function copyToStageSql(spec: TableSpec, version: number): string {
  return `copy pg_temp.${ident(stageName(spec, version))} (${spec.columns.map((c) => ident(c.name)).join(', ')}) from stdin`;
}

export function copyIntoSql(schema: string, spec: TableSpec, version: number): string {
  return `copy ${qualified(schema, versionedName(spec.name, version))} (${spec.columns.map((c) => ident(c.name)).join(', ')}) from stdin`;
}

export function upsertFromStageSql(schema: string, spec: TableSpec, version: number): string {
  const target = qualified(schema, versionedName(spec.name, version));
  const cols = spec.columns.map((c) => ident(c.name)).join(', ');
  return `insert into ${target} (${cols}) select ${cols} from pg_temp.${ident(stageName(spec, version))} ${onConflict(spec)}`;
}

const COPY_SPECIAL = /[\\\n\r\t]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const copyEscape = (s: string): string =>
  COPY_SPECIAL.test(s) ? s.replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c] as string) : s;

const copyJson = (json: string): string => (json.indexOf('\\') === -1 ? json : json.replace(/\\/g, '\\\\'));

type CellFormat = (v: unknown) => string;

/** A value of another JavaScript type than the column's usual one: a Date as ISO 8601, else its string. */
const other = (v: unknown): string => (v instanceof Date ? v.toISOString() : copyEscape(String(v)));

/** How one column's values are written in COPY's text format (never null: the caller writes `\N`). */
function cellFormat(type: ColumnType): CellFormat {
  switch (type) {
    // JSON.stringify never emits a raw tab or line break: only its backslashes need doubling.
    case 'jsonb':
      return (v) => copyJson(JSON.stringify(v));
    case 'bigint':
    case 'integer':
      return (v) => (typeof v === 'number' ? String(v) : other(v));
    case 'timestamptz':
      return (v) => (typeof v === 'string' ? copyEscape(v) : other(v));
    case 'boolean':
      return (v) => (typeof v === 'boolean' ? (v ? 't' : 'f') : other(v));
    case 'text':
      return (v) => (typeof v === 'string' ? copyEscape(v) : other(v));
  }
}

interface ColumnWriter {
  name: string;
  nullable: boolean;
  format: CellFormat;
}

const writers = new WeakMap<TableSpec, readonly ColumnWriter[]>();

function columnWriters(spec: TableSpec): readonly ColumnWriter[] {
  let w = writers.get(spec);
  if (!w) {
    w = spec.columns.map((c) => ({
      name: c.name,
      nullable: c.nullable === true,
      format: cellFormat(c.type),
    }));
    writers.set(spec, w);
  }
  return w;
}

/**
 * Rows (already de-duplicated) as lines of COPY's text format, each ending in a line break; `\N` is
 * SQL null, and a null in a column that may not hold one is refused here rather than by Postgres.
 */
export function copyText(spec: TableSpec, rows: readonly Row[]): string {
  const cols = columnWriters(spec);
  const n = cols.length;
  const lines = new Array<string>(rows.length + 1);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as Row;
    let line = '';
    for (let i = 0; i < n; i++) {
      const c = cols[i] as ColumnWriter;
      const v = row[c.name];
      let cell: string;
      if (v === null || v === undefined) {
        if (!c.nullable) throw new Error(`${spec.name}.${c.name} may not be null`);
        cell = '\\N';
      } else {
        cell = c.format(v);
      }
      line = i === 0 ? cell : `${line}\t${cell}`;
    }
    lines[r] = line;
  }
  lines[rows.length] = '';
  return lines.join('\n');
}

/**
 * The rows of one table in COPY's text format, de-duplicated by key (last wins) and checked for
 * nulls — the same rows `upsertPayload` would send as JSON. Null when there are none.
 */
export function copyPayload(spec: TableSpec, rows: readonly Row[]): { text: string; rows: number } | null {
  const unique = dedupeByKey(spec, rows);
  if (unique.length === 0) return null;
  return { text: copyText(spec, unique), rows: unique.length };
}
