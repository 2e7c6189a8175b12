import { isTerminal, receiptThreads, threadKeyOf } from '@caseloop/case-model';
import { draft, EventDraft } from '@caseloop/contracts';
import { CaseContext } from '../case.commands';
import { deliveryId } from '../case.ids';
import { CaseRecord, ReceiptFact } from './case-record.evolve';
import { evaluateGate } from './completion-gate';
import { delivery, receiptDelivery, recipient, say } from './case.wording';

/** A receipt was built: judge it, and route it to every source only if it may be shown. */
export function gate(state: CaseRecord, receipt: ReceiptFact, ctx: CaseContext): EventDraft[] {
  const e = receipt.data;
  if (isTerminal(state.status) || !state.taskId || e.taskId !== state.taskId || state.task !== 'active')
    return [];
  if (state.rules.verdicts.some((v) => v.seq > receipt.seq)) return [];
  const repo = ctx.repositories.find((r) => r.id === state.repository);
  const verdict = evaluateGate(state, e, repo?.checkKinds ?? []);
  const drafts: EventDraft[] = [
    draft('GateEvaluated', {
      taskId: state.taskId,
      revision: e.revision,
      targetHead: verdict.targetHead,
      claims: verdict.claims,
      complete: verdict.complete,
      outcome: verdict.outcome,
    }),
  ];
  if (verdict.stale) {
    // A receipt routed earlier and not yet superseded was proven on the old head as well.
    const notices = staleNotices(state, verdict.targetHead);
    drafts.push(
      draft('ProofMarkedStale', {
        taskId: state.taskId,
        provenRevision: e.revision,
        targetHead: verdict.targetHead,
      }),
      draft('TaskResumed', {
        taskId: state.taskId,
        reason: 'stale_proof',
        note: `The target branch moved to ${verdict.targetHead}; the proof on ${e.revision} no longer counts.`,
      }),
      ...notices,
    );
    return drafts;
  }
  if (verdict.complete || verdict.outcome === 'blocked') {
    for (const s of receiptThreads(state))
      drafts.push(receiptDelivery(recipient(state, s.sourceId), receipt));
  }
  return drafts;
}

/** The gate has not judged the latest receipt (a crash between the two): judge it now. */
export function pendingGate(state: CaseRecord, ctx: CaseContext): EventDraft[] {
  const receipt = state.rules.receipts.at(-1);
  return receipt ? gate(state, receipt, ctx) : [];
}

/** The receipt routed after the latest gate, if nothing has since made it obsolete. */
export function routedReceipt(state: CaseRecord): ReceiptFact | null {
  const rid = state.routedReceipts.at(-1);
  if (!rid) return null;
  const receipt = [...state.rules.receipts].reverse().find((x) => x.data.receiptId === rid);
  if (!receipt) return null;
  return state.rules.obsoletedAt > receipt.seq ? null : receipt;
}

/**
 * The target moved after a passing run the case relies on: the proof is history, the same task
 * resumes, and every thread that was shown a receipt of that proof is told it is out of date.
 */
export function staleProof(state: CaseRecord): EventDraft[] {
  const relying = ['validating', 'pr_ready', 'implemented_client_blocked', 'awaiting_review'];
  const proof = state.latestChecks;
  if (!state.taskId || state.task !== 'active' || !relying.includes(state.status) || !proof || !proof.passed)
    return [];
  // The fold never moves the head backwards, so a late run on a superseded head is stale too.
  const head = state.targetHead;
  if (!head || proof.targetHead === head) return [];
  return [
    draft('ProofMarkedStale', { taskId: state.taskId, provenRevision: proof.revision, targetHead: head }),
    draft('TaskResumed', {
      taskId: state.taskId,
      reason: 'stale_proof',
      note: `The target branch moved to ${head} after checks passed on ${proof.revision}; rebase and prove again.`,
    }),
    ...staleNotices(state, head),
  ];
}

/**
 * A short notice in every thread the routed receipt was posted to, once per receipt (the delivery
 * id names the receipt and the source, and a stale receipt is never routed again). Nothing when
 * no receipt was routed: nobody was shown the proof. Must run before the stale mark is recorded.
 */
function staleNotices(state: CaseRecord, head: string): EventDraft[] {
  const receipt = routedReceipt(state);
  if (!receipt) return [];
  const rid = receipt.data.receiptId;
  const shown = state.deliveries.filter((d) => d.kind === 'receipt' && d.receiptId === rid && !d.refused);
  const text = say.stale({
    caseId: state.caseId,
    branch: state.targetBranch,
    head,
    proven: receipt.data.revision,
    conflict: state.rules.conflictHeads.includes(head),
  });
  const threads = new Set<string>();
  const drafts: EventDraft[] = [];
  for (const d of shown) {
    const s = state.sources.find((x) => x.sourceId === d.sourceId);
    if (!s || threads.has(threadKeyOf(s))) continue;
    threads.add(threadKeyOf(s));
    drafts.push(delivery(recipient(state, s.sourceId), 'notice', deliveryId('stale', rid, s.sourceId), text));
  }
  return drafts;
}
