import { CaseState, foldCase } from '@caseloop/case-model';
import type { RecordedEvent } from '@caseloop/contracts';
import { NatsConnection } from 'nats';
import { DataSource, QueryRunner } from 'typeorm';
import { ProjectionCatalog } from '../projection-catalog';
import { ProjectionError } from '../projection.errors';
import { Row } from '../table-spec';
import { CASE_SOURCES, CASES, caseLedgerProjection, caseRow, caseSourceRows } from './case-ledger.projection';
import { readCaseHistory, Undecodable } from './case-stream';

export interface Drift {
  /** `cases.status`, `cases.state.sources[1].via`, `case_sources[discord-1].via`, `timeline[seq 42]`. */
  field: string;
  stream: unknown;
  projection: unknown;
}

export interface CaseAudit {
  caseId: string;
  version: number;
  checkpoint: number;
  /** Case events in the stream up to the projection's checkpoint (what the row must reflect). */
  eventsFolded: number;
  /** Case events past the checkpoint: lag, not drift. */
  eventsAhead: number;
  undecodable: Undecodable[];
  drift: Drift[];
}

export interface CaseProjectionRows {
  cases: Row | null;
  caseSources: Row[];
  timelineSeqs: number[];
}

const TIME_COLUMNS = new Set(['opened_at', 'updated_at']);
const NUMBER_COLUMNS = new Set(['last_seq', 'event_count']);

/**
 * Compares the fold of the stream with the projection's rows, field by field. Pure: the same
 * comparison serves `caseloop audit`, the rebuild's sample check and the tests.
 */
export function diffCase(folded: CaseState, caseEvents: readonly RecordedEvent[], rows: CaseProjectionRows): Drift[] {
  const drift: Drift[] = [];
  if (folded.status === 'none') {
    if (rows.cases) drift.push({ field: 'cases', stream: null, projection: `row for ${String(rows.cases.case_id)}` });
  } else if (!rows.cases) {
    drift.push({ field: 'cases', stream: `case ${folded.caseId}`, projection: null });
  } else {
    const expected = caseRow(folded);
    for (const col of CASES.columns) {
      const name = col.name;
      const want = expected[name];
      const have = rows.cases[name];
      if (name === 'state') deepDiff('cases.state', want, have, drift);
      else if (!sameScalar(name, want, have)) drift.push({ field: `cases.${name}`, stream: want, projection: normalize(name, have) });
    }
  }
  const wantSources = new Map(
    (folded.status === 'none' ? [] : caseSourceRows(folded)).map((r) => [String(r.source_id), r] as const),
  );
  const haveSources = new Map(rows.caseSources.map((r) => [String(r.source_id), r] as const));
  for (const [sid, want] of wantSources) {
    const have = haveSources.get(sid);
    if (!have) {
      drift.push({ field: `case_sources[${sid}]`, stream: 'linked', projection: null });
      continue;
    }
    for (const col of CASE_SOURCES.columns) {
      if ((want[col.name] ?? null) !== (have[col.name] ?? null)) {
        drift.push({ field: `case_sources[${sid}].${col.name}`, stream: want[col.name] ?? null, projection: have[col.name] ?? null });
      }
    }
  }
  for (const sid of haveSources.keys()) {
    if (!wantSources.has(sid)) drift.push({ field: `case_sources[${sid}]`, stream: null, projection: 'linked' });
  }
  const wantSeqs = new Set(caseEvents.map((e) => e.seq));
  const haveSeqs = new Set(rows.timelineSeqs);
  for (const seq of wantSeqs) if (!haveSeqs.has(seq)) drift.push({ field: `timeline[seq ${seq}]`, stream: 'recorded', projection: null });
  for (const seq of haveSeqs) if (!wantSeqs.has(seq)) drift.push({ field: `timeline[seq ${seq}]`, stream: null, projection: 'recorded' });
  return drift;
}

function normalize(column: string, v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (TIME_COLUMNS.has(column)) return new Date(v as string | Date).toISOString();
  if (NUMBER_COLUMNS.has(column)) return Number(v);
  return v;
}

function sameScalar(column: string, a: unknown, b: unknown): boolean {
  return normalize(column, a) === normalize(column, b);
}

function deepDiff(path: string, want: unknown, have: unknown, out: Drift[]): void {
  if (Array.isArray(want) && Array.isArray(have)) {
    for (let i = 0; i < Math.max(want.length, have.length); i++) deepDiff(`${path}[${i}]`, want[i], have[i], out);
    return;
  }
  if (isObject(want) && isObject(have)) {
    for (const k of new Set([...Object.keys(want), ...Object.keys(have)])) deepDiff(`${path}.${k}`, want[k], have[k], out);
    return;
  }
  if ((want ?? null) !== (have ?? null)) out.push({ field: path, stream: want ?? null, projection: have ?? null });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads the case's rows from one version of the case ledger (the active one unless told). */
export async function loadCaseRows(
  catalog: ProjectionCatalog,
  sql: Pick<QueryRunner, 'query'> | DataSource,
  caseId: string,
  version: number,
): Promise<CaseProjectionRows> {
  const [row] = await sql.query(`select * from ${catalog.tableOf('cases', version)} where case_id = $1`, [caseId]);
  const caseSources = await sql.query(`select * from ${catalog.tableOf('case_sources', version)} where case_id = $1`, [caseId]);
  const timeline = await sql.query(`select seq from ${catalog.tableOf('timeline', version)} where case_id = $1`, [caseId]);
  return { cases: row ?? null, caseSources, timelineSeqs: timeline.map((r: { seq: string }) => Number(r.seq)) };
}

export interface AuditDeps {
  dataSource: DataSource;
  nc: NatsConnection;
  stream: string;
  namespace: string;
  /** Audit a version other than the active one (the rebuild's samples). */
  version?: number;
}

/** The checkpoint and the rows in one snapshot, so a runner committing meanwhile cannot fake drift. */
async function snapshot(deps: AuditDeps, caseId: string) {
  const catalog = new ProjectionCatalog(deps.dataSource);
  const qr = deps.dataSource.createQueryRunner();
  try {
    await qr.startTransaction('REPEATABLE READ');
    const name = caseLedgerProjection.name;
    const info = deps.version === undefined ? await catalog.active(name, qr) : await catalog.version(name, deps.version, qr);
    if (!info) throw new ProjectionError('no_active_version', `${name} has no version to audit (run \`caseloop migrate\`)`);
    return { info, rows: await loadCaseRows(catalog, qr, caseId, info.version) };
  } finally {
    if (qr.isTransactionActive) await qr.rollbackTransaction();
    await qr.release();
  }
}

/** Re-folds the case from the stream with `evolveCase` and compares it with the projection. */
export async function auditCase(deps: AuditDeps, caseId: string): Promise<CaseAudit> {
  const [history, { info, rows }] = await Promise.all([
    readCaseHistory(deps.nc, deps.stream, deps.namespace, caseId, { withSources: false }),
    snapshot(deps, caseId),
  ]);
  const upTo = history.caseEvents.filter((e) => e.seq <= info.checkpoint);
  return {
    caseId,
    version: info.version,
    checkpoint: info.checkpoint,
    eventsFolded: upTo.length,
    eventsAhead: history.caseEvents.length - upTo.length,
    undecodable: history.undecodable,
    drift: diffCase(foldCase(upTo), upTo, rows),
  };
}
