import { evolveCase, CaseState, CaseView, initialCaseState } from '@caseloop/case-model';
import type { RecordedEvent } from '@caseloop/contracts';
import { ApplyContext, Projection, RowChanges } from '../projection';
import { Row, TableSpec } from '../table-spec';

/**
 * The case view read model: one row per case (the fold of `evolveCase`), the sources linked to
 * each case, every inbound source, and a timeline with one row per event.
 */
export const CASES: TableSpec = {
  name: 'cases',
  key: ['case_id'],
  columns: [
    { name: 'case_id', type: 'text' },
    { name: 'status', type: 'text' },
    { name: 'title', type: 'text' },
    { name: 'classification', type: 'text', nullable: true },
    { name: 'task_id', type: 'text', nullable: true },
    { name: 'repository', type: 'text', nullable: true },
    { name: 'target_branch', type: 'text', nullable: true },
    { name: 'revision', type: 'text', nullable: true },
    { name: 'branch', type: 'text', nullable: true },
    { name: 'opened_at', type: 'timestamptz' },
    { name: 'updated_at', type: 'timestamptz' },
    { name: 'last_seq', type: 'bigint' },
    { name: 'last_event_type', type: 'text' },
    { name: 'event_count', type: 'integer' },
    { name: 'state', type: 'jsonb' },
  ],
  indexes: [
    ['status', 'status, updated_at'],
    ['task', 'task_id'],
  ],
};

/** Unique on the source id: one Discord message belongs to at most one case. */
export const CASE_SOURCES: TableSpec = {
  name: 'case_sources',
  key: ['source_id'],
  columns: [
    { name: 'source_id', type: 'text' },
    { name: 'case_id', type: 'text' },
    { name: 'channel_id', type: 'text' },
    { name: 'thread_id', type: 'text', nullable: true },
    { name: 'message_id', type: 'text' },
    { name: 'reporter_id', type: 'text' },
    { name: 'via', type: 'text' },
  ],
  indexes: [['case', 'case_id']],
};

export const SOURCES: TableSpec = {
  name: 'sources',
  key: ['source_id'],
  columns: [
    { name: 'source_id', type: 'text' },
    { name: 'status', type: 'text' },
    { name: 'guild_id', type: 'text' },
    { name: 'channel_id', type: 'text' },
    { name: 'thread_id', type: 'text', nullable: true },
    { name: 'message_id', type: 'text' },
    { name: 'author_id', type: 'text' },
    { name: 'via', type: 'text' },
    { name: 'reason', type: 'text', nullable: true },
    /** A received report's raw text: `sealed` (readable while its key exists), `forgotten`, or `not_kept`. */
    { name: 'raw_text', type: 'text', nullable: true },
    { name: 'seq', type: 'bigint' },
    { name: 'occurred_at', type: 'timestamptz' },
  ],
  indexes: [['channel', 'channel_id, message_id']],
};

export const TIMELINE: TableSpec = {
  name: 'timeline',
  key: ['seq'],
  appendOnly: true,
  columns: [
    { name: 'seq', type: 'bigint' },
    { name: 'subject', type: 'text' },
    { name: 'aggregate', type: 'text' },
    { name: 'aggregate_id', type: 'text' },
    { name: 'case_id', type: 'text', nullable: true },
    { name: 'type', type: 'text' },
    { name: 'version', type: 'integer' },
    { name: 'producer', type: 'text' },
    { name: 'occurred_at', type: 'timestamptz' },
    { name: 'event_id', type: 'text' },
    { name: 'command_id', type: 'text' },
    { name: 'causation_id', type: 'text', nullable: true },
    { name: 'correlation_id', type: 'text' },
    { name: 'data', type: 'jsonb' },
  ],
  indexes: [
    ['case', 'case_id, seq'],
    ['aggregate', 'aggregate, aggregate_id, seq'],
    ['correlation', 'correlation_id'],
  ],
};

export const caseRow = (s: CaseView): Row => ({
  case_id: s.caseId,
  status: s.status,
  title: s.title,
  classification: s.classification,
  task_id: s.taskId,
  repository: s.repository,
  target_branch: s.targetBranch,
  revision: s.revision,
  branch: s.branch,
  opened_at: s.openedAt,
  updated_at: s.updatedAt,
  last_seq: s.lastSeq,
  last_event_type: s.lastEventType,
  event_count: s.eventCount,
  state: s,
});

export const caseSourceRows = (s: CaseView): Row[] =>
  s.sources.map((x) => ({
    source_id: x.sourceId,
    case_id: s.caseId,
    channel_id: x.channelId,
    thread_id: x.threadId,
    message_id: x.messageId,
    reporter_id: x.reporterId,
    via: x.via,
  }));

export const timelineRow = (e: RecordedEvent): Row => ({
  seq: e.seq,
  subject: e.subject,
  aggregate: e.aggregate,
  aggregate_id: e.aggregateId,
  case_id: e.aggregate === 'case' ? e.aggregateId : null,
  type: e.type,
  version: e.version,
  producer: e.producer,
  occurred_at: e.occurredAt,
  event_id: e.eventId,
  command_id: e.commandId,
  causation_id: e.causationId,
  correlation_id: e.correlationId,
  data: atRest(e),
});

/**
 * What a read model keeps of an event's data: a report's sealed raw text stays in the stream only
 * (the timeline keeps which key sealed it). Every other payload is kept as read; `content` of a
 * report is the redacted copy.
 */
export const atRest = (e: RecordedEvent): unknown =>
  e.type === 'SourceReceived' && e.data.sealed
    ? { ...e.data, sealed: { keyId: e.data.sealed.keyId } }
    : e.data;

/** Turns a timeline row back into the event it recorded (for re-folding a case without the stream). */
export const eventFromTimeline = (r: Row): RecordedEvent =>
  ({
    seq: Number(r.seq),
    subject: r.subject,
    aggregate: r.aggregate,
    aggregateId: r.aggregate_id,
    type: r.type,
    version: Number(r.version),
    producer: r.producer,
    occurredAt: r.occurred_at instanceof Date ? r.occurred_at.toISOString() : String(r.occurred_at),
    eventId: r.event_id,
    commandId: r.command_id,
    causationId: r.causation_id ?? null,
    correlationId: r.correlation_id,
    data: r.data,
  }) as RecordedEvent;

/**
 * The sources rows of a batch: one per received or dropped message, and a forgotten report's row
 * again with `raw_text = forgotten` (read back in one query when its report came in an earlier batch).
 */
async function sourceRows(batch: readonly RecordedEvent[], ctx: ApplyContext): Promise<Row[]> {
  const rows = new Map<string, Row>();
  for (const e of batch) {
    const r = sourceRow(e);
    if (r) rows.set(String(r.source_id), r);
  }
  const forgotten = batch.filter((e) => e.type === 'SourceForgotten').map((e) => e.aggregateId);
  const earlier = forgotten.filter((id) => !rows.has(id));
  if (earlier.length > 0) {
    const stored = await ctx.query(
      `select * from ${ctx.table('sources')} where source_id = any($1::text[])`,
      [earlier],
    );
    for (const r of stored) rows.set(String(r.source_id), r);
  }
  for (const id of forgotten) {
    const r = rows.get(id);
    if (r && r.status === 'received') rows.set(id, { ...r, raw_text: 'forgotten' });
  }
  return [...rows.values()];
}

function sourceRow(e: RecordedEvent): Row | null {
  if (e.type === 'SourceReceived' || e.type === 'SourceDropped') {
    const d = e.data;
    return {
      source_id: d.sourceId,
      status: e.type === 'SourceReceived' ? 'received' : 'dropped',
      reason: e.type === 'SourceDropped' ? e.data.reason : null,
      raw_text: e.type === 'SourceDropped' ? null : e.data.sealed ? 'sealed' : 'not_kept',
      guild_id: d.place.guildId,
      channel_id: d.place.channelId,
      thread_id: d.place.threadId,
      message_id: d.place.messageId,
      author_id: d.authorId,
      via: d.via,
      seq: e.seq,
      occurred_at: e.occurredAt,
    };
  }
  return null;
}

/** Folded states kept between batches: the most recently touched cases, at most this many. */
const MEMO_CASES = 20_000;

function remember(memo: Map<string, CaseState>, states: Map<string, CaseState>): void {
  for (const [id, s] of states) {
    memo.delete(id);
    memo.set(id, s);
  }
  if (memo.size > MEMO_CASES) {
    let excess = memo.size - Math.floor(MEMO_CASES * 0.8);
    for (const id of memo.keys()) {
      if (excess-- <= 0) break;
      memo.delete(id);
    }
  }
}

export const caseViewProjection: Projection = {
  name: 'case-view',
  // 3: the timeline keeps a report's redacted copy without its sealed raw text; sources say raw_text.
  revision: 3,
  tables: [CASES, CASE_SOURCES, SOURCES, TIMELINE],

  async apply(batch, ctx): Promise<RowChanges> {
    const timeline = batch.map(timelineRow);
    const sources = await sourceRows(batch, ctx);

    const caseEvents = batch.filter((e) => e.aggregate === 'case');
    const ids = [...new Set(caseEvents.map((e) => e.aggregateId))];
    if (ids.length === 0) return { timeline, sources };

    // Cases folded by the previous batches of this runner are in its memo; the others come in one
    // query for the whole batch. The fold itself happens in memory.
    const memo = ctx.memo as Map<string, CaseState>;
    const states = new Map<string, CaseState>();
    const missing: string[] = [];
    for (const id of ids) {
      const s = memo.get(id);
      if (s) states.set(id, s);
      else missing.push(id);
    }
    if (missing.length > 0) {
      const current = await ctx.query<{ case_id: string; state: CaseView }>(
        `select case_id, state from ${ctx.table('cases')} where case_id = any($1::text[])`,
        [missing],
      );
      for (const r of current) states.set(r.case_id, r.state);
    }
    const lastSeq = (id: string): number => {
      const s = states.get(id);
      return s && s.status !== 'none' ? s.lastSeq : 0;
    };

    // An event at or below a case's last sequence is either a re-applied batch (already in the
    // timeline: skip) or a late one (a re-driven dead letter): that case is re-folded from its timeline.
    const behind = caseEvents.filter((e) => e.seq <= lastSeq(e.aggregateId));
    const refold = new Set<string>();
    if (behind.length > 0) {
      const seen = await ctx.query<{ seq: string }>(
        `select seq from ${ctx.table('timeline')} where seq = any($1::bigint[])`,
        [behind.map((e) => e.seq)],
      );
      const known = new Set(seen.map((r) => Number(r.seq)));
      for (const e of behind) if (!known.has(e.seq)) refold.add(e.aggregateId);
    }

    const changed = new Set<string>();
    // Only these cases' source rows can differ from what is stored: the rest are not rewritten.
    const sourcesChanged = new Set<string>(refold);
    for (const e of caseEvents) {
      if (refold.has(e.aggregateId) || e.seq <= lastSeq(e.aggregateId)) continue;
      const before = states.get(e.aggregateId) ?? initialCaseState();
      const after = evolveCase(before, e);
      if (after !== before) {
        states.set(e.aggregateId, after);
        changed.add(e.aggregateId);
        if (before.status === 'none' || before.sources !== (after as CaseView).sources)
          sourcesChanged.add(e.aggregateId);
      }
    }

    if (refold.size > 0) {
      const rows = await ctx.query(
        `select * from ${ctx.table('timeline')} where case_id = any($1::text[]) order by seq`,
        [[...refold]],
      );
      const history = new Map<string, Map<number, RecordedEvent>>();
      const add = (e: RecordedEvent) => {
        const h = history.get(e.aggregateId) ?? new Map<number, RecordedEvent>();
        h.set(e.seq, e);
        history.set(e.aggregateId, h);
      };
      rows.map(eventFromTimeline).forEach(add);
      caseEvents.filter((e) => refold.has(e.aggregateId)).forEach(add);
      for (const id of refold) {
        const events = [...(history.get(id)?.values() ?? [])].sort((a, b) => a.seq - b.seq);
        states.set(id, events.reduce(evolveCase, initialCaseState()));
        changed.add(id);
      }
    }

    const cases: Row[] = [];
    const caseSources: Row[] = [];
    for (const id of changed) {
      const s = states.get(id);
      if (!s || s.status === 'none') continue;
      cases.push(caseRow(s));
      if (sourcesChanged.has(id)) caseSources.push(...caseSourceRows(s));
    }
    remember(memo, states);
    return { timeline, sources, cases, case_sources: caseSources };
  },
};
