import { isTerminal, receiptThreads, threadKeyOf } from '@caseloop/case-model';
import { draft, EventData, EventDraft } from '@caseloop/contracts';
import { CaseContext } from '../case.commands';
import { deliveryId } from '../case.ids';
import { CaseRecord } from './case-record.evolve';
import { delivery, receiptDelivery, recipient, safe, say, toFirst } from './case.wording';
import { routedReceipt, staleProof } from './gate.rules';

/**
 * Awaiting review only when every source routed to the case is on it, and the receipt is
 * confirmed in every source's thread.
 */
export function awaitReview(state: CaseRecord, ctx: CaseContext): EventDraft[] {
  if (isTerminal(state.status) || state.status === 'awaiting_review') return [];
  const landed = (id: string) =>
    state.sources.some((s) => s.sourceId === id) || state.linkReviews.some((r) => r.sourceId === id);
  if ((ctx.routed ?? []).some((id) => !landed(id))) return [];
  const receipt = routedReceipt(state);
  if (!receipt) return [];
  // A blocked receipt is shown to everyone but asks for a revision or a rejection, not a review.
  const verdict = state.rules.verdicts.find((v) => v.seq > receipt.seq);
  if (!verdict?.complete) return [];
  const rid = receipt.data.receiptId;
  const drafts: EventDraft[] = [];
  const confirmed: string[] = [];
  const threads = receiptThreads(state);
  for (const s of threads) {
    const inThread = new Set(
      state.sources.filter((x) => threadKeyOf(x) === threadKeyOf(s)).map((x) => x.sourceId),
    );
    const ds = state.deliveries.filter(
      (d) => d.kind === 'receipt' && d.receiptId === rid && inThread.has(d.sourceId),
    );
    if (ds.length === 0) drafts.push(receiptDelivery(recipient(state, s.sourceId), receipt));
    else if (ds.some((d) => d.confirmed)) confirmed.push(s.sourceId);
  }
  if (drafts.length > 0 || confirmed.length !== threads.length || confirmed.length === 0) return drafts;
  return [draft('CaseAwaitingReview', { receiptId: rid, confirmedSources: confirmed })];
}

/** A reviewer's approve, revise or reject, written in a case thread. */
export function humanDecision(state: CaseRecord, d: EventData<'ReviewerDecided'>): EventDraft[] {
  if (isTerminal(state.status)) return [];
  const notice = (text: string) => toFirst(state, 'notice', deliveryId('notice', d.messageId), text);
  const toAll = (text: string): EventDraft[] =>
    receiptThreads(state).map((s) =>
      delivery(
        recipient(state, s.sourceId),
        'decision',
        deliveryId('decision', d.messageId, s.sourceId),
        text,
      ),
    );
  switch (d.decision) {
    case 'approve': {
      // The head moved under the receipt (reported, not yet marked stale): the proof is stale now.
      const stale = staleProof(state);
      if (stale.length > 0) return [...stale, ...notice(say.approvalStale(state.caseId))];
      if (state.status !== 'awaiting_review') return notice(say.approvalEarly(state.caseId, state.status));
      return [
        draft('CaseApproved', { reviewerId: d.reviewerId, branch: state.branch, revision: state.revision }),
        ...toAll(say.approved(state.caseId, d.reviewerId, state.branch)),
      ];
    }
    case 'revise': {
      if (!state.taskId || state.task !== 'active') return notice(say.nothingToRevise(state.caseId));
      // Redaction markers can be longer than what they replace: clip to the schema's bound.
      const text = safe(d.text ?? 'revision requested').slice(0, 4000) || 'revision requested';
      return [
        draft('RevisionRequested', { reviewerId: d.reviewerId, text }),
        draft('TaskResumed', { taskId: state.taskId, reason: 'revision_requested', note: text }),
        ...notice(say.revising(d.reviewerId, state.taskId)),
      ];
    }
    case 'reject':
      return [
        draft('CaseRejected', {
          reviewerId: d.reviewerId,
          reason: d.text ? safe(d.text).slice(0, 4000) : null,
        }),
        ...(state.taskId && state.task === 'active'
          ? [draft('TaskCancelled', { taskId: state.taskId, reason: 'rejected by a reviewer' })]
          : []),
        ...toAll(say.rejected(state.caseId, d.reviewerId)),
      ];
  }
}
