import { discordSourceId, DiscordPlace, draft } from '@caseloop/contracts';
import { EventStore } from '@caseloop/ledger';
import { Binding } from '../binding/binding.schema';
import { InboundMessage } from '../intake/inbound-message';
import { CommandSink } from '../intake/source.recorder';
import { DeliveryOutbox } from '../outbox/delivery.outbox';
import { IntakeLog, IntakeMetrics } from '../ops/intake.metrics';
import { DiscordRest } from '../discord/discord.rest';
import { discordFailure } from '../discord/discord.errors';
import { commandDeliveryId, commandRefusalLine, CommandRefusalReason } from './command.replies';
import {
  ComponentInteraction,
  decisionModal,
  MODAL_TEXT_INPUT,
  ModalInteraction,
  modalValue,
  parseButton,
  parseModal,
} from './decision-components';
import { SlashInteraction } from './slash-command';
import { decideCommand, ParsedReviewerCommand, pendingLinkReviews } from './reviewer-command.decider';

type CommandInput = {
  caseId: string;
  message: InboundMessage;
  place: DiscordPlace;
  parsed: ParsedReviewerCommand;
};

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
    const sourceId = discordSourceId(message.id);
    const { result, refusal } = await this.#record(
      caseId,
      message.authorId,
      message.id,
      `cmd-${message.id}`,
      parsed,
    );
    if (result.alreadyHandled || refusal === null) return;
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

  /**
   * `/caseloop …` in a case thread: the same decision as plain text, answered with an ephemeral
   * interaction reply (Discord requires an answer within 3 s, and only the invoker needs to see it).
   */
  async handleInteraction(
    i: SlashInteraction,
    caseId: string | null,
    parsed: ParsedReviewerCommand,
    rest: DiscordRest,
  ): Promise<void> {
    let line: string;
    if (caseId === null) {
      line = 'Use /caseloop inside a case thread.';
    } else {
      const { result, refusal } = await this.#record(caseId, i.member.user.id, i.id, `slash-${i.id}`, parsed);
      line =
        refusal !== null
          ? commandRefusalLine(refusal)
          : result.alreadyHandled
            ? 'Already recorded.'
            : `Recorded: ${commandSummary(parsed)}.`;
    }
    try {
      await rest.interactionReply(i.id, i.token, line);
    } catch (e) {
      this.log.warn({ interactionId: i.id, status: discordFailure(e).status }, 'interaction not answered');
    }
  }

  /**
   * A click on a receipt's or link review's button. Approve, Same case and Different are decisions
   * at once; Request changes and Reject open a modal for the text — for reviewers only: anyone else
   * gets the refusal, seen by them alone (ephemeral), and nothing opens.
   */
  async handleComponent(i: ComponentInteraction, caseId: string | null, rest: DiscordRest): Promise<void> {
    const click = parseButton(i.data.custom_id);
    if (!click) return;
    const userId = i.member.user.id;
    try {
      if (caseId === null) {
        await rest.interactionReply(i.id, i.token, 'This button belongs to no case thread.');
        return;
      }
      if (click.kind === 'ask') {
        if (!this.binding.reviewers.includes(userId)) {
          // Recorded like a typed command from a non-reviewer: the decider refuses before reading any text.
          await this.#record(caseId, userId, i.id, `button-${i.id}`, {
            status: 'malformed',
            name: click.action,
            problem: 'no text yet',
          });
          await rest.interactionReply(i.id, i.token, commandRefusalLine('not_a_reviewer'));
          return;
        }
        await rest.interactionModal(i.id, i.token, decisionModal(click.action, click.ref));
        return;
      }
      await rest.interactionReply(
        i.id,
        i.token,
        await this.#answer(caseId, userId, i.id, `button-${i.id}`, click.command),
      );
    } catch (e) {
      this.log.warn({ interactionId: i.id, status: discordFailure(e).status }, 'button not answered');
    }
  }

  /** The text of a Request changes or Reject modal: recorded as the text command would be, answered ephemerally. */
  async handleModal(i: ModalInteraction, caseId: string | null, rest: DiscordRest): Promise<void> {
    const command = parseModal(i.data.custom_id, modalValue(i, MODAL_TEXT_INPUT));
    if (!command) return;
    try {
      const line =
        caseId === null
          ? 'This form belongs to no case thread.'
          : await this.#answer(caseId, i.member.user.id, i.id, `modal-${i.id}`, command);
      await rest.interactionReply(i.id, i.token, line);
    } catch (e) {
      this.log.warn({ interactionId: i.id, status: discordFailure(e).status }, 'modal not answered');
    }
  }

  async #answer(
    caseId: string,
    userId: string,
    interactionId: string,
    commandId: string,
    parsed: ParsedReviewerCommand,
  ): Promise<string> {
    const { result, refusal } = await this.#record(caseId, userId, interactionId, commandId, parsed);
    return refusal !== null
      ? commandRefusalLine(refusal)
      : result.alreadyHandled
        ? 'Already recorded.'
        : `Recorded: ${commandSummary(parsed)}.`;
  }

  async #record(
    caseId: string,
    authorId: string,
    messageId: string,
    commandId: string,
    parsed: ParsedReviewerCommand,
  ) {
    let refusal: CommandRefusalReason | null = null;
    const result = await this.store.handle({
      aggregate: 'case',
      aggregateId: caseId,
      producer: 'intake',
      commandId,
      causationId: null,
      correlationId: discordSourceId(messageId),
      occurredAt: this.now().toISOString(),
      consistency: 'producer',
      decide: (events) => {
        refusal = null;
        const d = decideCommand(
          { authorId, messageId, parsed },
          this.binding.reviewers,
          pendingLinkReviews(events),
        );
        if ('accepted' in d) return [d.accepted];
        refusal = d.refused;
        return [draft('CommandRefused', { authorId, messageId, command: d.command, reason: d.refused })];
      },
    });
    if (!result.alreadyHandled) {
      if (refusal !== null) this.metrics.refused.inc({ kind: 'command' });
      else this.log.info({ caseId, messageId, type: result.appended[0]?.type }, 'reviewer command recorded');
    }
    return { result, refusal: refusal as CommandRefusalReason | null };
  }
}

const commandSummary = (p: ParsedReviewerCommand): string =>
  p.status === 'command' ? p.command.kind : p.name;
