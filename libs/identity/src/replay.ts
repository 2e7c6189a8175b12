import { z } from 'zod';
import { IdentityIndex, IdentityOutcome } from './identity-index';

export const replayReportSchema = z.object({
  id: z.string().min(1).max(200),
  text: z.string().max(16_000),
  created: z.string().min(1),
  author: z.string().max(200).optional(),
});
export type ReplayReport = z.infer<typeof replayReportSchema>;

export interface ReplayLine {
  id: string;
  decision: IdentityOutcome;
  /** The case the report opened or joined; for `review`, the candidate case it is held on. */
  caseId: string;
  confidence: number;
  matchedWith: string | null;
  reasons: string[];
}

/**
 * What happens to a held report while replaying: `hold` keeps it out of the index, as the
 * service does until a human settles the review; an oracle can settle it (evaluation).
 */
export type ReviewSettler = (report: ReplayReport, candidateCaseId: string) => 'same' | 'different' | 'hold';

/** Orders reports by time (then id, so ties are deterministic). */
export const inTimeOrder = (reports: readonly ReplayReport[]): ReplayReport[] =>
  [...reports].sort((a, b) =>
    a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
  );

/**
 * Runs reports through the same identity rules the coordinator applies: each report is compared
 * with the open cases so far, then opens a case, joins one, or is held for review.
 */
export function replayReports(
  reports: readonly ReplayReport[],
  index: IdentityIndex,
  options: { caseIdFor: (report: ReplayReport) => string; settle?: ReviewSettler },
): ReplayLine[] {
  const out: ReplayLine[] = [];
  for (const r of inTimeOrder(reports)) {
    const parsed = Date.parse(r.created);
    const at = Number.isFinite(parsed) ? parsed : null;
    const d = index.decide({ text: r.text, at });
    let caseId: string;
    if (d.decision === 'link' && d.matchedWith) {
      caseId = d.matchedWith;
      index.add(caseId, r.id, r.text, null, at);
    } else if (d.decision === 'review' && d.matchedWith) {
      caseId = d.matchedWith;
      const verdict = options.settle?.(r, d.matchedWith) ?? 'hold';
      if (verdict === 'same') index.add(caseId, r.id, r.text, null, at);
      if (verdict === 'different') {
        caseId = options.caseIdFor(r);
        index.add(caseId, r.id, r.text, null, at);
      }
    } else {
      caseId = options.caseIdFor(r);
      index.add(caseId, r.id, r.text, null, at);
    }
    out.push({
      id: r.id,
      decision: d.decision,
      caseId,
      confidence: d.confidence,
      matchedWith: d.matchedWith,
      reasons: d.reasons,
    });
  }
  return out;
}
