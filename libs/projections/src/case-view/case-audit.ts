import { CaseState, foldCase } from '@caseloop/case-model';
import { aggregateFilter, decodeEvent, PRODUCERS, RecordedEvent, subjectFor } from '@caseloop/contracts';
import { JetStreamManager, NatsConnection, StoredMsg } from 'nats';
import { DataSource, QueryRunner } from 'typeorm';
import { ProjectionCatalog } from '../projection-catalog';
import { ProjectionError } from '../projection.errors';
import { Row } from '../table-spec';
import { CASE_SOURCES, CASES, caseViewProjection, caseRow, caseSourceRows } from './case-view.projection';
import { rawTextStates, RawTextState, readCaseHistory, readSubjectHistory, Undecodable } from './case-stream';

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
  /** How the stream was read: by the sequences the timeline names (counts checked) or a subject scan. */
  read: 'by_seq' | 'scan';
  /** What the stream still holds of each linked report's raw text (up to the checkpoint). */
  sources: { sourceId: string; rawText: RawTextState | null }[];
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
export function diffCase(
  folded: CaseState,
  caseEvents: readonly RecordedEvent[],
  rows: CaseProjectionRows,
): Drift[] {
  const drift: Drift[] = [];
  if (folded.status === 'none') {
    if (rows.cases)
      drift.push({ field: 'cases', stream: null, projection: `row for ${String(rows.cases.case_id)}` });
  } else if (!rows.cases) {
    drift.push({ field: 'cases', stream: `case ${folded.caseId}`, projection: null });
  } else {
    const expected = caseRow(folded);
    for (const col of CASES.columns) {
      const name = col.name;
      const want = expected[name];
      const have = rows.cases[name];
      if (name === 'state') deepDiff('cases.state', want, have, drift);
      else if (!sameScalar(name, want, have))
        drift.push({ field: `cases.${name}`, stream: want, projection: normalize(name, have) });
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
        drift.push({
          field: `case_sources[${sid}].${col.name}`,
          stream: want[col.name] ?? null,
          projection: have[col.name] ?? null,
        });
      }
    }
  }
  for (const sid of haveSources.keys()) {
    if (!wantSources.has(sid))
      drift.push({ field: `case_sources[${sid}]`, stream: null, projection: 'linked' });
  }
  const wantSeqs = new Set(caseEvents.map((e) => e.seq));
  const haveSeqs = new Set(rows.timelineSeqs);
  for (const seq of wantSeqs)
    if (!haveSeqs.has(seq))
      drift.push({ field: `timeline[seq ${seq}]`, stream: 'recorded', projection: null });
  for (const seq of haveSeqs)
    if (!wantSeqs.has(seq))
      drift.push({ field: `timeline[seq ${seq}]`, stream: null, projection: 'recorded' });
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
    for (let i = 0; i < Math.max(want.length, have.length); i++)
      deepDiff(`${path}[${i}]`, want[i], have[i], out);
    return;
  }
  if (isObject(want) && isObject(have)) {
    for (const k of new Set([...Object.keys(want), ...Object.keys(have)]))
      deepDiff(`${path}.${k}`, want[k], have[k], out);
    return;
  }
  if ((want ?? null) !== (have ?? null))
    out.push({ field: path, stream: want ?? null, projection: have ?? null });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads the case's rows from one version of the case view (the active one unless told). */
/**
 * The case's rows in one version and that version's checkpoint, in ONE statement: a single
 * statement sees a single snapshot, so a runner committing meanwhile cannot fake drift.
 */
export async function loadCaseRows(
  catalog: ProjectionCatalog,
  sql: Pick<QueryRunner, 'query'> | DataSource,
  caseId: string,
  version: number,
): Promise<CaseProjectionRows & { checkpoint: number }> {
  const [r] = await sql.query(
    `select
       (select seq from ${catalog.t('projection_checkpoints')} where projection = $2 and version = $3) as checkpoint,
       (select row_to_json(c) from ${catalog.tableOf('cases', version)} c where case_id = $1) as case_row,
       (select coalesce(json_agg(s), '[]'::json) from ${catalog.tableOf('case_sources', version)} s where case_id = $1) as sources,
       (select coalesce(json_agg(seq order by seq), '[]'::json) from ${catalog.tableOf('timeline', version)} where case_id = $1) as seqs`,
    [caseId, caseViewProjection.name, version],
  );
  return {
    checkpoint: Number(r?.checkpoint ?? 0),
    cases: (r?.case_row as Row | null) ?? null,
    caseSources: (r?.sources as Row[]) ?? [],
    timelineSeqs: ((r?.seqs as number[]) ?? []).map(Number),
  };
}

export interface AuditDeps {
  dataSource: DataSource;
  nc: NatsConnection;
  stream: string;
  namespace: string;
  /** Audit a version other than the active one (the rebuild's samples). */
  version?: number;
  jsm?: JetStreamManager;
  /** Always scan the case's subjects instead of reading at the timeline's sequences. */
  scan?: boolean;
}

async function snapshot(deps: AuditDeps, caseId: string) {
  const catalog = new ProjectionCatalog(deps.dataSource);
  const name = caseViewProjection.name;
  const info =
    deps.version === undefined ? await catalog.active(name) : await catalog.version(name, deps.version);
  if (!info)
    throw new ProjectionError(
      'no_active_version',
      `${name} has no version to audit (run \`caseloop migrate\`)`,
    );
  const { checkpoint, ...rows } = await loadCaseRows(catalog, deps.dataSource, caseId, info.version);
  return { info: { ...info, checkpoint }, rows };
}

type DirectQuery = { seq: number } | { last_by_subj: string };

/** nats.js 2.29 has direct get on every JetStreamManager but leaves it out of the type. */
function directGet(jsm: JetStreamManager, stream: string, q: DirectQuery): Promise<StoredMsg> {
  const direct = (
    jsm as JetStreamManager & { direct?: { getMessage(s: string, q: DirectQuery): Promise<StoredMsg> } }
  ).direct;
  if (direct) return direct.getMessage(stream, q);
  return 'seq' in q
    ? jsm.streams.getMessage(stream, q)
    : jsm.streams.getMessage(stream, { last_by_subj: q.last_by_subj });
}

const EXPECTED_SEQ = 'Nats-Expected-Last-Subject-Sequence';
const EXPECTED_SEQ_SUBJECT = 'Nats-Expected-Last-Subject-Sequence-Subject';

/**
 * The case's events straight from the stream by sequence (direct gets, in parallel), at the
 * sequences the projection's timeline names — the projection only says where to look; what is
 * folded is the stream. Returns `null` (the caller then scans the case's subjects) unless:
 * - every message is on one of the case's subjects and decodes;
 * - on each of the case's subjects the stream's last message (an O(1) per-subject lookup) is the
 *   last one the timeline names, and is not past the projection's checkpoint;
 * - wherever an event was appended with an expected last sequence (optimistic concurrency), that
 *   sequence is the previous message the timeline names on the same subject (or the whole case):
 *   the appends themselves chain the case's history, so a missing event shows.
 * (nats-server 2.9 can count a subject's messages only by walking every subject of the stream,
 * ≈ 0.4 s at a million events; this needs none of that.)
 */
async function readCaseBySeqs(
  deps: AuditDeps,
  jsm: JetStreamManager,
  caseId: string,
  seqs: readonly number[],
  checkpoint: number,
): Promise<RecordedEvent[] | null> {
  const filter = aggregateFilter(deps.namespace, 'case', caseId);
  const prefix = filter.slice(0, -1);
  const [tails, msgs] = await Promise.all([
    Promise.all(
      PRODUCERS.map((p) =>
        directGet(jsm, deps.stream, { last_by_subj: `${prefix}${p}` }).then(
          (m) => [`${prefix}${p}`, m.seq] as const,
          () => [`${prefix}${p}`, 0] as const,
        ),
      ),
    ),
    Promise.all(seqs.map((seq) => directGet(jsm, deps.stream, { seq }))),
  ]);
  const events: RecordedEvent[] = [];
  const bySubject = new Map<string, number[]>();
  const sorted = [...msgs].sort((a, b) => a.seq - b.seq);
  let previousInCase = 0;
  for (const m of sorted) {
    if (!m.subject.startsWith(prefix)) return null;
    const onSubject = bySubject.get(m.subject) ?? [];
    const expected = m.header?.get(EXPECTED_SEQ);
    if (expected) {
      const previous = m.header.get(EXPECTED_SEQ_SUBJECT)
        ? previousInCase
        : (onSubject[onSubject.length - 1] ?? 0);
      if (Number(expected) !== previous) return null;
    }
    onSubject.push(m.seq);
    bySubject.set(m.subject, onSubject);
    previousInCase = m.seq;
    try {
      events.push(decodeEvent(m.subject, m.data, m.seq));
    } catch {
      return null;
    }
  }
  for (const [subject, last] of tails) {
    const known = bySubject.get(subject);
    if (last > checkpoint || last !== (known ? known[known.length - 1] : 0)) return null;
  }
  return events;
}

/** Re-folds the case from the stream with `evolveCase` and compares it with the projection. */
export async function auditCase(deps: AuditDeps, caseId: string): Promise<CaseAudit> {
  const jsm = deps.jsm ?? (await deps.nc.jetstreamManager({ checkAPI: false }));
  const { info, rows } = await snapshot(deps, caseId);
  let caseEvents =
    rows.timelineSeqs.length > 0 && !deps.scan
      ? await readCaseBySeqs(deps, jsm, caseId, rows.timelineSeqs, info.checkpoint).catch(() => null)
      : null;
  let undecodable: Undecodable[] = [];
  const read = caseEvents ? 'by_seq' : 'scan';
  if (!caseEvents) {
    const history = await readCaseHistory(deps.nc, deps.stream, deps.namespace, caseId, {
      withSources: false,
      jsm,
    });
    caseEvents = history.caseEvents;
    undecodable = history.undecodable;
  }
  const upTo = caseEvents.filter((e) => e.seq <= info.checkpoint);
  const folded = foldCase(upTo);
  const drift = diffCase(folded, upTo, rows);
  const sources = await auditRawText(deps, jsm, folded, info, drift);
  return {
    caseId,
    version: info.version,
    checkpoint: info.checkpoint,
    eventsFolded: upTo.length,
    eventsAhead: caseEvents.length - upTo.length,
    undecodable,
    drift,
    read,
    sources,
  };
}

/**
 * Each linked report's raw text as the stream has it (its intake subject, up to the checkpoint:
 * sealed, forgotten or not kept), against the `sources.raw_text` the projection wrote.
 */
async function auditRawText(
  deps: AuditDeps,
  jsm: JetStreamManager,
  folded: CaseState,
  info: { version: number; checkpoint: number },
  drift: Drift[],
): Promise<CaseAudit['sources']> {
  if (folded.status === 'none' || folded.sources.length === 0) return [];
  const ids = folded.sources.map((x) => x.sourceId);
  const histories = await Promise.all(
    ids.map((id) =>
      readSubjectHistory(deps.nc, jsm, deps.stream, subjectFor(deps.namespace, 'source', id, 'intake')),
    ),
  );
  const states = rawTextStates(histories.flatMap((h) => h.events.filter((e) => e.seq <= info.checkpoint)));
  const catalog = new ProjectionCatalog(deps.dataSource);
  const stored = (await deps.dataSource.query(
    `select source_id, raw_text from ${catalog.tableOf('sources', info.version)} where source_id = any($1::text[])`,
    [ids],
  )) as { source_id: string; raw_text: string | null }[];
  const have = new Map(stored.map((r) => [r.source_id, r.raw_text] as const));
  return ids.map((sourceId) => {
    const rawText = states.get(sourceId) ?? null;
    if (rawText && (have.get(sourceId) ?? null) !== rawText)
      drift.push({
        field: `sources[${sourceId}].raw_text`,
        stream: rawText,
        projection: have.get(sourceId) ?? null,
      });
    return { sourceId, rawText };
  });
}
