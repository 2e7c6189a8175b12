import { draft, EventDraft, RecordedEvent } from '@caseloop/contracts';
import { ParsedCommand, ReviewerCommand } from './command.parser';
import { CommandRefusalReason } from './command.replies';

export type ParsedReviewerCommand = Exclude<ParsedCommand, { status: 'not_a_command' }>;

export type CommandDecision =
  { accepted: EventDraft } | { refused: CommandRefusalReason; command: ReturnType<typeof commandName> };

const commandName = (p: ParsedReviewerCommand) => (p.status === 'command' ? p.command.kind : p.name);

/** Link reviews still waiting on a human, from the case's events. */
export function pendingLinkReviews(events: readonly RecordedEvent[]): Set<string> {
  const pending = new Set<string>();
  for (const e of events) {
    if (e.type === 'LinkReviewRequested') pending.add(e.data.reviewId);
    if (e.type === 'LinkReviewSettled') pending.delete(e.data.reviewId);
  }
  return pending;
}

/** Pure: what a command in a case thread becomes. */
export function decideCommand(
  input: { authorId: string; messageId: string; parsed: ParsedReviewerCommand },
  reviewers: readonly string[],
  pendingReviews: ReadonlySet<string>,
): CommandDecision {
  const name = commandName(input.parsed);
  if (!reviewers.includes(input.authorId)) return { refused: 'not_a_reviewer', command: name };
  if (input.parsed.status === 'malformed') return { refused: 'malformed', command: name };
  const c: ReviewerCommand = input.parsed.command;
  const who = { reviewerId: input.authorId, messageId: input.messageId };
  switch (c.kind) {
    case 'approve':
      return { accepted: draft('ReviewerDecided', { ...who, decision: 'approve', text: null }) };
    case 'revise':
      return { accepted: draft('ReviewerDecided', { ...who, decision: 'revise', text: c.text }) };
    case 'reject':
      return { accepted: draft('ReviewerDecided', { ...who, decision: 'reject', text: c.reason }) };
    case 'actionable':
      return { accepted: draft('CaseMadeActionable', { ...who, note: c.note }) };
    case 'same':
    case 'different':
      if (!pendingReviews.has(c.reviewId)) return { refused: 'not_applicable', command: name };
      return { accepted: draft('LinkReviewSettled', { ...who, reviewId: c.reviewId, verdict: c.kind }) };
    case 'privacy-ok':
      return { accepted: draft('PrivacyApproved', { ...who, artifactSha256: c.sha256 }) };
  }
}
