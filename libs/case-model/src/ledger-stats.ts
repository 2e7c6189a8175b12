import type { RecordedEvent } from '@caseloop/contracts';
import { CaseView } from './case.state';
import { foldCase, receiptThreads, threadKeyOf } from './case.state';

/** A measure with its explicit numerator and denominator (ratio is null when nothing was counted). */
export interface Ratio {
  numerator: number;
  denominator: number;
  ratio: number | null;
}

export interface LedgerStats {
  window: { since: string | null; until: string | null };
  /** Reports joined to an existing case instead of opening one / reports that reached a case decision. */
  duplicatePrevention: Ratio & { opened: number; linked: number; held: number };
  /** Proofs rejected as stale / passing check runs. */
  staleProofRejections: Ratio;
  /** Receipts confirmed in every linked source thread / receipts routed. */
  receiptCompleteness: Ratio;
  /** First source → awaiting review, for cases whose gate was complete (verified completions only). */
  cycleTime: {
    verifiedCompletions: number;
    p50Minutes: number | null;
    p90Minutes: number | null;
    meanMinutes: number | null;
  };
  improvementCandidates: number;
}

const ratio = (numerator: number, denominator: number): Ratio => ({
  numerator,
  denominator,
  ratio: denominator === 0 ? null : Math.round((numerator / denominator) * 1000) / 1000,
});

const quantile = (xs: number[], q: number): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.floor(q * s.length))] as number) * 10) / 10;
};

/**
 * The harness's trust measures, computed from ledger events only. An event counts when it
 * occurred inside the window; cycle time counts a completion when it entered the window.
 * Pure: the CLI reads the stream and passes the events in stream order.
 */
export function ledgerStats(
  events: readonly RecordedEvent[],
  window: { since?: string | null; until?: string | null } = {},
): LedgerStats {
  const since = window.since ? Date.parse(window.since) : -Infinity;
  const until = window.until ? Date.parse(window.until) : Infinity;
  const inWindow = (e: RecordedEvent): boolean => {
    const t = Date.parse(e.occurredAt);
    return t >= since && t <= until;
  };
  const byCase = new Map<string, RecordedEvent[]>();
  const sourceCreated = new Map<string, number>();
  let improvementCandidates = 0;
  for (const e of events) {
    if (e.type === 'SourceReceived') sourceCreated.set(e.data.sourceId, Date.parse(e.data.createdAt));
    if (e.type === 'ImprovementCandidateRecorded' && inWindow(e)) improvementCandidates += 1;
    if (e.aggregate !== 'case') continue;
    let list = byCase.get(e.aggregateId);
    if (!list) byCase.set(e.aggregateId, (list = []));
    list.push(e);
  }

  let opened = 0;
  let linked = 0;
  let held = 0;
  let stale = 0;
  let passingRuns = 0;
  let routed = 0;
  let complete = 0;
  const cycles: number[] = [];
  for (const caseEvents of byCase.values()) {
    const settled = new Set(
      caseEvents
        .filter((e) => e.type === 'LinkReviewSettled')
        .map((e) => (e as RecordedEvent<'LinkReviewSettled'>).data.reviewId),
    );
    for (const e of caseEvents) {
      if (!inWindow(e)) continue;
      if (e.type === 'CaseOpened') opened += 1;
      if (e.type === 'SourceLinked' && (e.data.via === 'semantic_match' || e.data.via === 'link_review'))
        linked += 1;
      if (e.type === 'LinkReviewRequested' && !settled.has(e.data.reviewId)) held += 1;
      if (e.type === 'ProofMarkedStale') stale += 1;
      if (e.type === 'ChecksCompleted' && e.data.passed) passingRuns += 1;
    }
    const state = foldCase(caseEvents);
    if (state.status === 'none') continue;
    // Receipts routed in the window, and whether every source of the case confirmed each.
    const receiptIds = new Set<string>();
    for (const e of caseEvents) {
      if (e.type === 'DeliveryRequested' && e.data.kind === 'receipt' && e.data.receiptId && inWindow(e))
        receiptIds.add(e.data.receiptId);
    }
    for (const rid of receiptIds) {
      routed += 1;
      if (confirmedEverywhere(state, rid)) complete += 1;
    }
    const cycle = verifiedCycle(state, caseEvents, sourceCreated, inWindow);
    if (cycle !== null) cycles.push(cycle);
  }
  return {
    window: { since: window.since ?? null, until: window.until ?? null },
    duplicatePrevention: { ...ratio(linked, opened + linked + held), opened, linked, held },
    staleProofRejections: ratio(stale, passingRuns),
    receiptCompleteness: ratio(complete, routed),
    cycleTime: {
      verifiedCompletions: cycles.length,
      p50Minutes: quantile(cycles, 0.5),
      p90Minutes: quantile(cycles, 0.9),
      meanMinutes:
        cycles.length === 0
          ? null
          : Math.round((cycles.reduce((a, b) => a + b, 0) / cycles.length) * 10) / 10,
    },
    improvementCandidates,
  };
}

/** Confirmed in every thread of the case (a delivery to any source of that thread counts). */
function confirmedEverywhere(state: CaseView, rid: string): boolean {
  const threads = receiptThreads(state);
  const confirmedThreads = new Set(
    state.deliveries
      .filter((d) => d.kind === 'receipt' && d.receiptId === rid && d.confirmed)
      .map((d) => state.sources.find((s) => s.sourceId === d.sourceId))
      .filter((s): s is CaseView['sources'][number] => s !== undefined)
      .map(threadKeyOf),
  );
  return threads.length > 0 && threads.every((s) => confirmedThreads.has(threadKeyOf(s)));
}

/** Minutes from the case's first source to its first CaseAwaitingReview whose receipt passed a complete gate. */
function verifiedCycle(
  state: CaseView,
  events: readonly RecordedEvent[],
  sourceCreated: ReadonlyMap<string, number>,
  inWindow: (e: RecordedEvent) => boolean,
): number | null {
  for (const e of events) {
    if (e.type !== 'CaseAwaitingReview') continue;
    const receipt = events.find((x) => x.type === 'ReceiptBuilt' && x.data.receiptId === e.data.receiptId);
    if (!receipt) continue;
    const gate = events.find((x) => x.type === 'GateEvaluated' && x.seq > receipt.seq);
    if (!gate || gate.type !== 'GateEvaluated' || !gate.data.complete) continue;
    if (!inWindow(e)) return null;
    const first = state.sources[0];
    const start = (first && sourceCreated.get(first.sourceId)) ?? Date.parse(state.openedAt);
    return (Date.parse(e.occurredAt) - start) / 60_000;
  }
  return null;
}
