import { ledgerStats } from '@caseloop/case-model';
import { CasePageReader } from './case-page.reader';
import {
  CaseDetailView,
  caseDetail,
  caseList,
  CaseListView,
  OPS_FINDINGS_SHOWN,
  opsFindingList,
  OpsFindingsView,
  StatusFilter,
  waitingOn,
  WaitingView,
} from './case-page.view';

/** Load → shape: the reader's rows and events through the pure view functions. */
export class CasePageService {
  constructor(
    private readonly reader: CasePageReader,
    private readonly evidenceBaseUrl: string | null,
  ) {}

  async cases(filter: StatusFilter, now: string): Promise<CaseListView> {
    const [rows, counts, { events, total }, waiting, opsFindings] = await Promise.all([
      this.reader.caseRows(filter),
      this.reader.statusCounts(),
      this.reader.statsEvents(),
      this.waiting(now),
      this.reader.opsFindingCount(),
    ]);
    return caseList({
      rows,
      counts,
      stats: { ...ledgerStats(events), eventsRead: total },
      waiting: waiting.items.length,
      opsFindings,
      filter,
      now,
    });
  }

  async case(caseId: string, now: string): Promise<CaseDetailView | null> {
    const state = await this.reader.caseState(caseId);
    if (!state) return null;
    const events = await this.reader.caseEvents(
      caseId,
      state.sources.map((s) => s.sourceId),
    );
    const [candidates, deadLetters] = await Promise.all([
      this.reader.candidatesFor(caseId),
      this.reader.deadLettersFor(caseId, new Set(events.map((e) => e.seq))),
    ]);
    return caseDetail({ state, events, candidates, deadLetters, evidenceBaseUrl: this.evidenceBaseUrl, now });
  }

  async opsFindings(now: string): Promise<OpsFindingsView> {
    const [events, total] = await Promise.all([
      this.reader.opsFindings(OPS_FINDINGS_SHOWN),
      this.reader.opsFindingCount(),
    ]);
    return opsFindingList({ events, total, now });
  }

  async waiting(now: string): Promise<WaitingView> {
    const live = await this.reader.liveCasesForWaiting();
    const items = live
      .flatMap(({ state, events }) => waitingOn(state, events))
      .sort((a, b) => a.since.localeCompare(b.since));
    return { kind: 'waiting', generatedAt: now, items };
  }
}
