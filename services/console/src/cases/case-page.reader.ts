import { CaseStatus, CaseView, TERMINAL_STATUSES } from '@caseloop/case-model';
import type { RecordedEvent } from '@caseloop/contracts';
import { Ledger, listConsumerDeadLetters } from '@caseloop/ledger';
import { eventFromTimeline, listProjectionDeadLetters } from '@caseloop/projections';
import { DataSource } from 'typeorm';
import { OPS_FINDINGS_AGGREGATE_ID } from '@caseloop/contracts';
import type { CaseRow, DeadLetterView, StatusFilter } from './case-page.view';

const UNDEFINED_TABLE = '42P01';
const LIST_LIMIT = 500;

/** The projection is not built yet (a fresh schema): readers see an empty ledger, not an error. */
const orEmpty = async <T>(q: Promise<T[]>): Promise<T[]> => {
  try {
    return await q;
  } catch (e) {
    if ((e as { code?: string }).code === UNDEFINED_TABLE) return [];
    throw e;
  }
};

interface CaseDbRow {
  case_id: string;
  status: CaseStatus;
  title: string;
  classification: string | null;
  task_id: string | null;
  revision: string | null;
  opened_at: Date;
  updated_at: Date;
  last_seq: string;
  last_event_type: string;
  event_count: number;
  sources: string;
}

/**
 * Reads the case page's data from the case-view projection's reader views (`cases`,
 * `case_sources`, `timeline`) and the ledger's dead letters. Read-only: it never writes.
 */
export class CasePageReader {
  private statsCache: { lastSeq: number; count: number; events: RecordedEvent[] } | null = null;

  constructor(
    private readonly ds: DataSource,
    private readonly schema: string,
    private readonly ledger: Ledger,
  ) {}

  private t(view: 'cases' | 'case_sources' | 'timeline'): string {
    return `"${this.schema}".${view}`;
  }

  async caseRows(filter: StatusFilter): Promise<CaseRow[]> {
    const where =
      filter === null ? '' : filter === 'live' ? 'where c.status <> all($1)' : 'where c.status = $1';
    const params = filter === null ? [] : filter === 'live' ? [TERMINAL_STATUSES] : [filter];
    const rows = await orEmpty<CaseDbRow>(
      this.ds.query(
        `select c.case_id, c.status, c.title, c.classification, c.task_id, c.revision, c.opened_at, c.updated_at,
                c.last_seq, c.last_event_type, c.event_count,
                (select count(*) from ${this.t('case_sources')} s where s.case_id = c.case_id) as sources
           from ${this.t('cases')} c ${where}
          order by (c.status = any('{${TERMINAL_STATUSES.join(',')}}'::text[])), c.updated_at desc
          limit ${LIST_LIMIT}`,
        params,
      ),
    );
    return rows.map((r) => ({
      caseId: r.case_id,
      status: r.status,
      title: r.title,
      classification: r.classification,
      taskId: r.task_id,
      revision: r.revision,
      openedAt: r.opened_at.toISOString(),
      updatedAt: r.updated_at.toISOString(),
      lastSeq: Number(r.last_seq),
      lastEventType: r.last_event_type,
      eventCount: Number(r.event_count),
      sources: Number(r.sources),
    }));
  }

  async statusCounts(): Promise<Partial<Record<CaseStatus, number>>> {
    const rows = await orEmpty<{ status: CaseStatus; n: string }>(
      this.ds.query(`select status, count(*) as n from ${this.t('cases')} group by status`),
    );
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  /**
   * The events the trust measures read, in stream order: every case event, the sources' receipt
   * times and the improvement candidates — `ledgerStats`, the same pure computation `caseloop stats`
   * runs over the stream. A report's words are left in Postgres. Re-read only when the timeline changed.
   */
  async statsEvents(): Promise<{ events: RecordedEvent[]; total: number }> {
    const [head] = await orEmpty<{ last: string | null; n: string }>(
      this.ds.query(`select max(seq) as last, count(*) as n from ${this.t('timeline')}`),
    );
    const lastSeq = Number(head?.last ?? 0);
    const total = Number(head?.n ?? 0);
    if (this.statsCache && this.statsCache.lastSeq === lastSeq && this.statsCache.count === total)
      return { events: this.statsCache.events, total };
    const rows = await orEmpty<Record<string, unknown>>(
      this.ds.query(
        `select seq, subject, aggregate, aggregate_id, type, version, producer, occurred_at, event_id, command_id,
                causation_id, correlation_id,
                case when type = 'SourceReceived' then data - 'content' - 'attachments' else data end as data
           from ${this.t('timeline')}
          where seq <= $1 and (aggregate = 'case' or type in ('SourceReceived', 'ImprovementCandidateRecorded'))
          order by seq`,
        [lastSeq],
      ),
    );
    const events = rows.map(eventFromTimeline);
    this.statsCache = { lastSeq, count: total, events };
    return { events, total };
  }

  async caseState(caseId: string): Promise<CaseView | null> {
    const rows = await orEmpty<{ state: CaseView }>(
      this.ds.query(`select state from ${this.t('cases')} where case_id = $1`, [caseId]),
    );
    return rows[0]?.state ?? null;
  }

  /** The case's own events and those recorded on its sources' subjects (identity decisions, read receipts). */
  async caseEvents(caseId: string, sourceIds: readonly string[]): Promise<RecordedEvent[]> {
    const rows = await orEmpty<Record<string, unknown>>(
      this.ds.query(
        `select * from ${this.t('timeline')}
          where case_id = $1 or (aggregate = 'source' and aggregate_id = any($2::text[]))
          order by seq`,
        [caseId, sourceIds],
      ),
    );
    return rows.map(eventFromTimeline);
  }

  async candidatesFor(caseId: string): Promise<RecordedEvent<'ImprovementCandidateRecorded'>[]> {
    const rows = await orEmpty<Record<string, unknown>>(
      this.ds.query(
        `select * from ${this.t('timeline')} where type = 'ImprovementCandidateRecorded' and data->'caseIds' ? $1 order by seq`,
        [caseId],
      ),
    );
    return rows.map(eventFromTimeline) as RecordedEvent<'ImprovementCandidateRecorded'>[];
  }

  /**
   * Findings that belong to no case: the monitor's `OpsFindingRecorded` on the ops aggregate
   * `findings`, newest first, at most `limit` (one backward range of the timeline's aggregate index).
   */
  async opsFindings(limit: number): Promise<RecordedEvent<'OpsFindingRecorded'>[]> {
    const rows = await orEmpty<Record<string, unknown>>(
      this.ds.query(
        `select * from ${this.t('timeline')}
          where aggregate = 'ops' and aggregate_id = $1 and type = 'OpsFindingRecorded'
          order by seq desc
          limit $2`,
        [OPS_FINDINGS_AGGREGATE_ID, limit],
      ),
    );
    return rows.map(eventFromTimeline) as RecordedEvent<'OpsFindingRecorded'>[];
  }

  async opsFindingCount(): Promise<number> {
    const [row] = await orEmpty<{ n: string }>(
      this.ds.query(
        `select count(*) as n from ${this.t('timeline')}
          where aggregate = 'ops' and aggregate_id = $1 and type = 'OpsFindingRecorded'`,
        [OPS_FINDINGS_AGGREGATE_ID],
      ),
    );
    return Number(row?.n ?? 0);
  }

  /** Live cases with what a human may owe them (held reports, approvals, decisions). */
  async liveCasesForWaiting(): Promise<{ state: CaseView; events: RecordedEvent[] }[]> {
    const states = await orEmpty<{ state: CaseView }>(
      this.ds.query(`select state from ${this.t('cases')} where status <> all($1) order by updated_at`, [
        TERMINAL_STATUSES,
      ]),
    );
    if (states.length === 0) return [];
    const ids = states.map((r) => r.state.caseId);
    const rows = await orEmpty<Record<string, unknown>>(
      this.ds.query(
        `select * from ${this.t('timeline')}
          where case_id = any($1::text[])
            and type in ('LinkReviewRequested', 'ArtifactReviewed', 'PrivacyApproved', 'CaseAwaitingReview')
          order by seq`,
        [ids],
      ),
    );
    const byCase = new Map<string, RecordedEvent[]>();
    for (const e of rows.map(eventFromTimeline))
      byCase.set(e.aggregateId, [...(byCase.get(e.aggregateId) ?? []), e]);
    return states.map((r) => ({ state: r.state, events: byCase.get(r.state.caseId) ?? [] }));
  }

  /**
   * Dead letters touching this case: consumer dead letters of its events (by stream sequence) and
   * projection dead letters on its subjects (events the read model could not apply).
   */
  async deadLettersFor(caseId: string, seqs: ReadonlySet<number>): Promise<DeadLetterView[]> {
    const out: DeadLetterView[] = [];
    const projectionLetters = await orEmpty(listProjectionDeadLetters(this.ds));
    // The case's subjects: events of its timeline, and messages on them the projection could not decode.
    const marker = `.case.${caseId}.`;
    const ofCase = new Set(seqs);
    for (const d of projectionLetters) {
      if (!d.subject.includes(marker)) continue;
      ofCase.add(d.seq);
      out.push({ origin: 'projection', seq: d.seq, consumer: d.projection, code: d.code, reason: d.error });
    }
    const ledgerLetters = await listConsumerDeadLetters(this.ledger.jsm, this.ledger.stream).catch(
      (e: unknown) => {
        // No dead-letter stream yet means none were written.
        if ((e as { api_error?: { err_code?: number } }).api_error?.err_code === 10059) return [];
        throw e;
      },
    );
    // A consumer's own record and the server's MSG_TERMINATED advisory name the same message: one line, the record's reason first.
    const seen = new Map<string, DeadLetterView>();
    for (const d of [...ledgerLetters].sort(
      (a, b) => Number(b.source === 'record') - Number(a.source === 'record'),
    )) {
      const key = `${d.consumer}:${d.streamSeq}`;
      if (!ofCase.has(d.streamSeq) || seen.has(key)) continue;
      seen.set(key, {
        origin: 'consumer',
        seq: d.streamSeq,
        consumer: d.consumer,
        code: d.code ?? d.source,
        reason: d.reason,
      });
    }
    out.push(...seen.values());
    return out.sort((a, b) => a.seq - b.seq || a.consumer.localeCompare(b.consumer));
  }
}
