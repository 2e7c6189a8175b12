import { CaseView } from '@caseloop/case-model';
import { DiscordPlace, draft, EventDraft } from '@caseloop/contracts';
import { redactText } from '@caseloop/privacy';
import { SourceFacts } from '../case.commands';
import { deliveryId } from '../case.ids';
import { ReceiptFact } from './case-record.evolve';

/**
 * Everything the coordinator says in Discord, and the one way it asks for a post. Rules decide
 * *whether* to speak; the words live here, so they can be read (and changed) side by side.
 */
export const say = {
  acknowledged: (caseId: string, next: string) => `Thanks — this is now case ${caseId}. ${next}`,
  joined: (caseId: string, title: string) =>
    `Thanks — this is the same problem as case ${caseId} ("${title}"). Your report joined that case; you will get its result here too.`,
  held: (caseId: string, title: string, reviewId: string) =>
    `Thanks — this might be the same problem as case ${caseId} ("${title}"), but we are not sure, so a human will check. ` +
    `Reviewers: reply \`same ${reviewId}\` or \`different ${reviewId}\`. Your report is kept either way.`,
  blocked: (caseId: string, kind: string, detail: string) =>
    `Case ${caseId} is blocked (${kind.replace(/_/g, ' ')}): ${safe(detail)}\nA human needs to act before the task can go on.`,
  stillMissing: 'We still need a few details; an engineer will follow up in this thread.',
  working: (taskId: string, repository: string, branch: string) =>
    `Task ${taskId} is working on it in ${repository} (${branch}); you will get a receipt with the evidence here, then a reviewer decides.`,
  actionable: (caseId: string, next: string) => `Case ${caseId} is actionable. ${next}`,
  waiting: (classification: string): string => WAITING[classification] ?? 'A reviewer will look at it.',
  stale: (o: { caseId: string; branch: string | null; head: string; proven: string; conflict: boolean }) => {
    const branch = o.branch ? `\`${o.branch.replace(/`/g, "'")}\`` : 'the target branch';
    return (
      `The target branch ${branch} moved to \`${o.head.slice(0, 12)}\` after this result was proven on \`${o.proven.slice(0, 12)}\`; ` +
      (o.conflict
        ? `the change no longer applies to the new head cleanly, so a human needs to resolve the conflict before case ${o.caseId} can be proven again. The receipt above is out of date and cannot be approved.`
        : `caseloop is proving case ${o.caseId} again on the new head. The receipt above is out of date — a new one will follow here, and only that one can be approved.`)
    );
  },
  approvalStale: (caseId: string) =>
    `Case ${caseId} cannot be approved: the target branch moved after its receipt was proven, so that proof no longer counts. A new receipt will follow once it is proven again.`,
  approvalEarly: (caseId: string, status: string) =>
    `Case ${caseId} cannot be approved yet: it is ${status.replace(/_/g, ' ')}, and approval needs a receipt confirmed in every thread.`,
  approved: (caseId: string, reviewerId: string, branch: string | null) =>
    `Case ${caseId} was approved by <@${reviewerId}>. Nothing was merged: ${branch ? `branch \`${branch}\`` : 'the branch'} waits for a human to merge it.`,
  nothingToRevise: (caseId: string) => `Case ${caseId} has no task to revise yet.`,
  revising: (reviewerId: string, taskId: string) =>
    `Revision requested by <@${reviewerId}>; task ${taskId} resumes with it.`,
  rejected: (caseId: string, reviewerId: string) => `Case ${caseId} was rejected by <@${reviewerId}>.`,
};

const WAITING: Partial<Record<string, string>> = {
  feedback:
    'It is recorded as product feedback; a reviewer can turn it into engineering work with `actionable`.',
  question: 'It reads as a question; a human will answer here.',
  access:
    'It looks like an access or permission problem; a reviewer will check it before anything is changed.',
  private_context:
    'Most of it is private context, which never reaches a coding agent; a reviewer will look at it.',
};

export type Recipient = Pick<SourceFacts, 'sourceId' | 'place'>;

export function receiptDelivery(source: Recipient, receipt: ReceiptFact): EventDraft {
  const rid = receipt.data.receiptId;
  return draft('DeliveryRequested', {
    deliveryId: deliveryId('receipt', rid, source.sourceId),
    sourceId: source.sourceId,
    kind: 'receipt',
    place: source.place,
    content: safe(receipt.data.rendered).slice(0, 12_000) || `Receipt ${rid}`,
    receiptId: rid,
  });
}

export function delivery(
  source: Recipient,
  kind: 'ack' | 'linked' | 'question' | 'blocker' | 'notice' | 'link_review' | 'decision',
  id: string,
  content: string,
): EventDraft {
  return draft('DeliveryRequested', {
    deliveryId: id,
    sourceId: source.sourceId,
    kind,
    place: source.place,
    content: safe(content).slice(0, 12_000),
    receiptId: null,
  });
}

/** Every outgoing text passes the scanner once more: a credential in a receipt or a detail is never posted. */
export const safe = (text: string): string => redactText(text).text;

/** Where to post to a source of the case (its first source when the id is unknown). */
export function recipient(state: CaseView, sourceId: string): Recipient {
  const s =
    state.sources.find((x) => x.sourceId === sourceId) ?? (state.sources[0] as CaseView['sources'][number]);
  const place: DiscordPlace = {
    guildId: state.guildId,
    channelId: s.channelId,
    threadId: s.threadId,
    messageId: s.messageId,
  };
  return { sourceId: s.sourceId, place };
}

/** A post to the case's first reporter, if it has one. */
export function toFirst(
  state: CaseView,
  kind: Parameters<typeof delivery>[1],
  id: string,
  content: string,
): EventDraft[] {
  const first = state.sources[0];
  return first ? [delivery(recipient(state, first.sourceId), kind, id, content)] : [];
}
