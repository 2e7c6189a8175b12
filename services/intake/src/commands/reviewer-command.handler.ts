import { discordSourceId, DiscordPlace, draft, EventDraft, RecordedEvent } from '@caseloop/contracts';
import { EventStore } from '@caseloop/ledger';
import { Binding } from '../binding/binding.schema';
import { InboundMessage } from '../intake/inbound-message';
import { CommandSink } from '../intake/source.recorder';
import { DeliveryOutbox } from '../outbox/delivery.outbox';
import { IntakeLog, IntakeMetrics } from '../ops/intake.metrics';
import { ParsedCommand, ReviewerCommand } from './command.parser';
import { commandDeliveryId, commandRefusalLine, CommandRefusalReason } from './command.replies';

type CommandInput = { caseId: string; message: InboundMessage; place: DiscordPlace; parsed: Exclude<ParsedCommand, { status: 'not_a_command' }> };

export type CommandDecision = { accepted: EventDraft } | { refused: CommandRefusalReason; command: ReturnType<typeof commandName> };

const commandName = (p: CommandInput['parsed']) => (p.status === 'command' ? p.command.kind : p.name);

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
export function decideCommand(input: { authorId: string; messageId: string; parsed: CommandInput['parsed'] }, reviewers: readonly string[], pendingReviews: ReadonlySet<string>): CommandDecision {
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

/**
 * Reviewer commands typed in a case thread. A decision is an event on the case (load → decide →
 * append, idempotent per message); a refusal is a CommandRefused plus one fixed line in the thread.
 */
export class ReviewerCommandHandler implements CommandSink {
  constructor(
    private readonly store: EventStore,
    private readonly binding: Binding,
    private readonly outbox: DeliveryOutbox,
    private readonly log: IntakeLog,
    private readonly metrics: IntakeMetrics,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async handle({ caseId, message, place, parsed }: CommandInput): Promise<void> {
    let refusal: CommandRefusalReason | null = null;
    const sourceId = discordSourceId(message.id);
    const result = await this.store.handle({
      aggregate: 'case',
      aggregateId: caseId,
      producer: 'intake',
      commandId: `cmd-${message.id}`,
      causationId: null,
      correlationId: sourceId,
      occurredAt: this.now().toISOString(),
      consistency: 'producer',
      decide: (events) => {
        const d = decideCommand({ authorId: message.authorId, messageId: message.id, parsed }, this.binding.reviewers, pendingLinkReviews(events));
        if ('accepted' in d) return [d.accepted];
        refusal = d.refused;
        return [draft('CommandRefused', { authorId: message.authorId, messageId: message.id, command: d.command, reason: d.refused })];
      },
    });
    if (result.alreadyHandled) return;
    if (refusal === null) {
      this.log.info({ caseId, messageId: message.id, type: result.appended[0]?.type }, 'reviewer command recorded');
      return;
    }
    this.metrics.refused.inc({ kind: 'command' });
    await this.outbox.deliver({
      caseId,
      deliveryId: commandDeliveryId(message.id),
      sourceId,
      place,
      content: commandRefusalLine(refusal),
      causationId: result.appended[0]?.eventId ?? null,
      correlationId: sourceId,
      threadName: `Case ${caseId}`,
    });
  }
}
