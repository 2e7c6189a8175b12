import type { CaseView } from '@caseloop/case-model';
import type { RecordedEvent } from '@caseloop/contracts';
import { pct, safeText } from './view-text';

/** `/waiting` and a case's own waiting panel: what waits for a human. */

export interface WaitingItem {
  kind: 'link_review' | 'privacy_approval' | 'decision';
  caseId: string;
  caseTitle: string;
  detail: string;
  since: string;
  ref: string;
}

export interface WaitingView {
  kind: 'waiting';
  generatedAt: string;
  items: WaitingItem[];
}

/** What waits for a human on this case: held reports, artifacts awaiting approval, the decision. */
export function waitingOn(state: CaseView, events: readonly RecordedEvent[]): WaitingItem[] {
  const out: WaitingItem[] = [];
  const title = safeText(state.title);
  const requested = new Map<string, RecordedEvent<'LinkReviewRequested'>>();
  for (const e of events) if (e.type === 'LinkReviewRequested') requested.set(e.data.reviewId, e);
  for (const r of state.linkReviews) {
    if (r.verdict !== null) continue;
    out.push({
      kind: 'link_review',
      caseId: state.caseId,
      caseTitle: title,
      detail: `Is source ${r.sourceId} (reporter ${r.reporterId}) the same problem? Confidence ${pct(r.confidence)}.`,
      since: requested.get(r.reviewId)?.occurredAt ?? state.updatedAt,
      ref: r.reviewId,
    });
  }
  const approved = new Set<string>();
  for (const e of events) if (e.type === 'PrivacyApproved') approved.add(e.data.artifactSha256);
  const latestReview = new Map<string, RecordedEvent<'ArtifactReviewed'>>();
  for (const e of events) if (e.type === 'ArtifactReviewed') latestReview.set(e.data.artifactId, e);
  for (const e of latestReview.values()) {
    if (e.data.decision !== 'needs_human' || approved.has(e.data.sha256)) continue;
    out.push({
      kind: 'privacy_approval',
      caseId: state.caseId,
      caseTitle: title,
      detail: `${e.data.kind} ${e.data.artifactId} (sha-256 ${e.data.sha256.slice(0, 12)}…) waits for a reviewer's privacy approval.`,
      since: e.occurredAt,
      ref: e.data.sha256,
    });
  }
  if (state.status === 'awaiting_review' && state.decision === null) {
    const at = [...events].reverse().find((e) => e.type === 'CaseAwaitingReview');
    out.push({
      kind: 'decision',
      caseId: state.caseId,
      caseTitle: title,
      detail: `Receipt ${state.latestReceiptId ?? '—'} confirmed in every thread: approve, revise or reject.`,
      since: at?.occurredAt ?? state.updatedAt,
      ref: state.latestReceiptId ?? state.caseId,
    });
  }
  return out;
}
