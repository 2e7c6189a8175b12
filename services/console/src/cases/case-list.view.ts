import { CASE_STATUSES, CaseStatus, isTerminal, LedgerStats } from '@caseloop/case-model';
import { safeText } from './view-text';

/** `/cases`: the list of cases and the trust measures. */

/** One row of the `cases` reader view, as the reader hands it over. */
export interface CaseRow {
  caseId: string;
  status: CaseStatus;
  title: string;
  classification: string | null;
  taskId: string | null;
  revision: string | null;
  openedAt: string;
  updatedAt: string;
  lastSeq: number;
  lastEventType: string;
  eventCount: number;
  sources: number;
}

export interface CaseListItem extends CaseRow {
  live: boolean;
  ageMinutes: number;
  lastEventAgoMinutes: number;
}

export interface CaseListView {
  kind: 'cases';
  generatedAt: string;
  filter: { status: CaseStatus | 'live' | null };
  statuses: readonly CaseStatus[];
  counts: Partial<Record<CaseStatus, number>>;
  stats: LedgerStats & { eventsRead: number };
  waiting: number;
  /** Findings that belong to no case, all of them (the `/findings` page lists the most recent). */
  opsFindings: number;
  cases: CaseListItem[];
}

export type StatusFilter = CaseStatus | 'live' | null;

export function parseStatusFilter(value: string | null | undefined): StatusFilter | 'invalid' {
  if (value === null || value === undefined || value === '' || value === 'all') return null;
  if (value === 'live') return 'live';
  return (CASE_STATUSES as readonly string[]).includes(value) ? (value as CaseStatus) : 'invalid';
}

const minutesBetween = (from: string, now: string): number =>
  Math.max(0, Math.floor((Date.parse(now) - Date.parse(from)) / 60_000));

/** Live cases first (most recently moved first), then the settled ones. */
export function caseList(input: {
  rows: readonly CaseRow[];
  counts: Partial<Record<CaseStatus, number>>;
  stats: LedgerStats & { eventsRead: number };
  waiting: number;
  opsFindings: number;
  filter: StatusFilter;
  now: string;
}): CaseListView {
  const cases = input.rows
    .filter(
      (r) =>
        input.filter === null ||
        (input.filter === 'live' ? !isTerminal(r.status) : r.status === input.filter),
    )
    .map((r) => ({
      ...r,
      title: safeText(r.title),
      live: !isTerminal(r.status),
      ageMinutes: minutesBetween(r.openedAt, input.now),
      lastEventAgoMinutes: minutesBetween(r.updatedAt, input.now),
    }))
    .sort(
      (a, b) =>
        Number(b.live) - Number(a.live) ||
        Date.parse(b.updatedAt) - Date.parse(a.updatedAt) ||
        a.caseId.localeCompare(b.caseId),
    );
  return {
    kind: 'cases',
    generatedAt: input.now,
    filter: { status: input.filter },
    statuses: CASE_STATUSES,
    counts: input.counts,
    stats: input.stats,
    waiting: input.waiting,
    opsFindings: input.opsFindings,
    cases,
  };
}
