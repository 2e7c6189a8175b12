import { DiscordPlace, RecordedEvent } from '@caseloop/contracts';
import { EventStore, TransientError } from '@caseloop/ledger';
import { ChannelDirectory } from '../discord/channel.directory';
import { DiscordRest, FetchedMessage } from '../discord/discord.rest';
import { IntakeIndex, OpenIntent } from '../intake/intake-index';
import { KeyedSerializer } from '../intake/keyed-serializer';
import { IntakeLedgerWriter } from '../intake/ledger-writer';
import { IntakeLog, IntakeMetrics } from '../ops/intake.metrics';
import { splitIntoChunks } from './chunking';
import { ChunkSender } from './chunk.sender';
import { ChunkProgress, deliveryProgress, nextDeliveryStep } from './delivery.decider';
import { DeliveryJournal } from './delivery.journal';
import {
  decisionButtons,
  DeliverySpec,
  OutboxOptions,
  specFromLedger,
  specFromRequest,
} from './delivery.request';
import { DropNoticeSender } from './drop-notice.sender';
import { OwnMessageFinder } from './own-message.finder';

export type { DeliveryKind, DeliverySpec, OutboxOptions } from './delivery.request';

/**
 * The only writer of messages to Discord. Every chunk is journaled (DeliveryIntended) before its
 * POST and resolved after (DeliveryConfirmed / DeliveryRefused); an intent left open by a crash is
 * reconciled against what Discord actually has before anything else is posted.
 *
 * This class is the loop: one delivery at a time per case, each chunk's next step decided from the
 * case's events (`nextDeliveryStep`). Posting and reconciling a chunk is `ChunkSender`'s, recording
 * the outcomes `DeliveryJournal`'s, reading Discord's history back `OwnMessageFinder`'s.
 */
export class DeliveryOutbox {
  readonly #perCase = new KeyedSerializer();
  #closing = false;
  readonly #journal: DeliveryJournal;
  readonly #finder: OwnMessageFinder;
  readonly #sender: ChunkSender;
  readonly #notices: DropNoticeSender;

  constructor(
    writer: IntakeLedgerWriter,
    private readonly store: EventStore,
    rest: DiscordRest,
    directory: ChannelDirectory,
    private readonly index: IntakeIndex,
    selfId: string,
    private readonly opts: OutboxOptions,
    private readonly log: IntakeLog,
    metrics: IntakeMetrics,
    now: () => Date = () => new Date(),
  ) {
    this.#journal = new DeliveryJournal(writer, index, log, metrics, now);
    this.#finder = new OwnMessageFinder(rest, selfId, opts);
    this.#sender = new ChunkSender(rest, directory, index, this.#journal, this.#finder, opts, log, now);
    this.#notices = new DropNoticeSender(rest, this.#finder, this.#journal, index, opts, log, now);
  }

  /** A coordinator's DeliveryRequested, as the transport hands it over (redelivery-safe). */
  async onDeliveryRequested(e: RecordedEvent<'DeliveryRequested'>): Promise<void> {
    await this.deliver(specFromRequest(e));
  }

  deliver(spec: DeliverySpec): Promise<void> {
    if (this.#closing) return Promise.reject(new TransientError('intake is shutting down'));
    return this.#perCase.run(spec.caseId, () => this.#deliver(spec));
  }

  /** Re-runs every delivery left with an open intent; returns how many it resumed. */
  async reconcileOpenIntents(): Promise<number> {
    const byDelivery = new Map<string, OpenIntent>();
    for (const i of this.index.openIntents.values()) byDelivery.set(`${i.caseId}|${i.deliveryId}`, i);
    for (const intent of byDelivery.values()) {
      const { events } = await this.store.load('case', intent.caseId);
      const spec = specFromLedger(intent.caseId, intent.deliveryId, events);
      if (!spec) {
        this.log.error(
          { caseId: intent.caseId, deliveryId: intent.deliveryId },
          'open delivery intent without a request to finish it',
        );
        continue;
      }
      await this.deliver(spec);
    }
    return byDelivery.size;
  }

  /** Stops taking new deliveries and waits for the ones running (graceful shutdown). */
  async drain(): Promise<void> {
    this.#closing = true;
    await this.#perCase.idle();
  }

  /** Our post of `content` for an intent, as Discord has it now (see `OwnMessageFinder.find`). */
  findOwnMessage(
    channelId: string,
    want: { content: string; intendedAt: string; claimed?: ReadonlySet<string> },
  ): Promise<FetchedMessage | null> {
    return this.#finder.find(channelId, want);
  }

  /** The one fixed line answering a dropped message (see `DropNoticeSender`). */
  sendNotice(
    sourceId: string,
    place: DiscordPlace,
    reason: 'oversized' | 'daily_ceiling',
    text: string,
    droppedAt: string,
    afterRestart: boolean,
  ): Promise<void> {
    return this.#notices.send(sourceId, place, reason, text, droppedAt, afterRestart);
  }

  async #deliver(spec: DeliverySpec): Promise<void> {
    const chunks = splitIntoChunks(spec.content, this.opts.replyChunkSize);
    const { events } = await this.store.load('case', spec.caseId);
    const progress = deliveryProgress(events, spec.deliveryId);
    const buttons = decisionButtons(spec, events);
    const claimed = new Set(
      events.flatMap((e) => (e.type === 'DeliveryConfirmed' ? [e.data.discordMessageId] : [])),
    );
    for (;;) {
      const step = nextDeliveryStep(chunks, progress, this.opts.replyChunkSize);
      if (step.kind === 'done') return;
      const at = { spec, chunks, i: step.index, progress };
      const last = step.index === chunks.length - 1;
      switch (step.kind) {
        case 'refuse':
          await this.#journal.refuse(
            spec,
            chunks.length,
            step.index,
            step.reason,
            step.reason === 'too_long'
              ? `chunk of ${(chunks[step.index] as string).length} characters`
              : 'an earlier chunk was not confirmed',
            progress,
          );
          continue;
        case 'reconcile':
          await this.#sender.reconcile(
            at,
            progress.get(step.index) as Extract<ChunkProgress, { status: 'intended' }>,
            claimed,
            last ? buttons : [],
          );
          continue;
        case 'post':
          await this.#sender.post(at, last ? buttons : [], last ? events : null);
          continue;
      }
    }
  }
}
