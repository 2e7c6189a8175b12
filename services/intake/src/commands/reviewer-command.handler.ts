import { discordSourceId, DiscordPlace, draft } from '@caseloop/contracts';
import { EventStore } from '@caseloop/ledger';
import { Binding } from '../binding/binding.schema';
import { InboundMessage } from '../intake/inbound-message';
import { CommandSink } from '../intake/source.recorder';
import { DeliveryOutbox } from '../outbox/delivery.outbox';
import { IntakeLog, IntakeMetrics } from '../ops/intake.metrics';
import { commandDeliveryId, commandRefusalLine, CommandRefusalReason } from './command.replies';
import { decideCommand, ParsedReviewerCommand, pendingLinkReviews } from './reviewer-command.decider';

type CommandInput = { caseId: string; message: InboundMessage; place: DiscordPlace; parsed: ParsedReviewerCommand };

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
