import { discordSourceId, DiscordPlace, draft, visibleChars } from '@caseloop/contracts';
import { SourceKeys } from '@caseloop/ledger';
import { DEFAULT_PRIVATE_MARKERS, sanitizeReport } from '@caseloop/privacy';
import { Binding } from '../binding/binding.schema';
import { ChannelDirectory } from '../discord/channel.directory';
import { discordFailure } from '../discord/discord.errors';
import { DiscordRest, EYES } from '../discord/discord.rest';
import { parseCommand, ParsedCommand } from '../commands/command.parser';
import { DeliveryOutbox } from '../outbox/delivery.outbox';
import { IntakeLog, IntakeMetrics } from '../ops/intake.metrics';
import { authorize, dropNotice, utcDay, writtenByPerson } from './authorization.decider';
import { InboundMessage } from './inbound-message';
import { IntakeIndex } from './intake-index';
import { KeyedSerializer } from './keyed-serializer';
import { IntakeLedgerWriter } from './ledger-writer';

export type Via = 'gateway' | 'delta';

export type IngestOutcome = 'recorded' | 'dropped' | 'already_recorded' | 'command' | 'in_flight';

/** Where reviewer commands typed in a case thread go. */
export interface CommandSink {
  handle(input: {
    caseId: string;
    message: InboundMessage;
    place: DiscordPlace;
    parsed: Exclude<ParsedCommand, { status: 'not_a_command' }>;
  }): Promise<void>;
}

/**
 * MESSAGE_CREATE (or a message found by the delta) → authorize → exact source identity →
 * SourceReceived durable (redacted text, raw text sealed) → 👀 → ReadReceiptAdded. One path for both, so a message seen twice is
 * recorded once: the source subject must be empty for the first event (`expectedSeq: 0`).
 */
export class SourceRecorder {
  readonly #inFlight = new Set<string>();
  /** Authorization and the append run one at a time per author: the daily ceiling is a per-author count. */
  readonly #perAuthor = new KeyedSerializer();
  readonly #background = new Set<Promise<unknown>>();
  /** Told about a live message that could not be recorded, so the next delta reaches back to it. */
  onLiveFailure: (channelId: string, messageId: string) => void = () => undefined;

  constructor(
    private readonly writer: IntakeLedgerWriter,
    private readonly rest: DiscordRest,
    private readonly directory: ChannelDirectory,
    private readonly binding: Binding,
    private readonly index: IntakeIndex,
    private readonly selfId: string,
    private readonly outbox: DeliveryOutbox,
    private readonly commands: CommandSink,
    private readonly log: IntakeLog,
    private readonly metrics: IntakeMetrics,
    private readonly keys: SourceKeys,
    private readonly privateMarkers: readonly string[] = DEFAULT_PRIVATE_MARKERS,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async ingest(m: InboundMessage, via: Via): Promise<IngestOutcome> {
    if (this.#inFlight.has(m.id)) return 'in_flight';
    this.#inFlight.add(m.id);
    try {
      return await this.#ingest(m, via);
    } finally {
      this.#inFlight.delete(m.id);
    }
  }

  async #ingest(m: InboundMessage, via: Via): Promise<IngestOutcome> {
    this.metrics.messagesIn.inc({ via });
    const facts = await this.directory.channel(m.channelId);
    const threadId = facts.isThread ? m.channelId : null;
    const boundChannelId = facts.isThread ? (facts.parentId ?? m.channelId) : m.channelId;
    const guildId = m.guildId ?? facts.guildId;
    const place: DiscordPlace = {
      guildId: guildId ?? '0',
      channelId: boundChannelId,
      threadId,
      messageId: m.id,
    };
    const sourceId = discordSourceId(m.id);
    const caseId = threadId ? this.index.caseThreads.get(threadId) : undefined;

    if (
      caseId &&
      guildId === this.binding.guildId &&
      writtenByPerson(m) &&
      !m.authorIsBot &&
      !m.webhookId &&
      m.authorId !== this.selfId
    ) {
      const parsed = parseCommand(m.content, this.selfId);
      if (parsed.status !== 'not_a_command') {
        await this.commands.handle({ caseId, message: m, place, parsed });
        this.index.seen(m.channelId, m.id);
        return 'command';
      }
    }

    const needRoles =
      m.memberRoles === null &&
      this.binding.reporterRoles.length > 0 &&
      guildId === this.binding.guildId &&
      !m.authorIsBot &&
      !this.binding.reporters.includes(m.authorId) &&
      !this.binding.reviewers.includes(m.authorId);
    const authorRoles =
      m.memberRoles ?? (needRoles ? await this.directory.roles(this.binding.guildId, m.authorId) : []);

    const result = await this.#perAuthor.run(m.authorId, async () => {
      const verdict = authorize(m, {
        binding: this.binding,
        selfId: this.selfId,
        guildId,
        boundChannelId,
        threadId,
        inCaseThread: caseId !== undefined,
        authorRoles,
        reportsToday: this.index.reportsToday(m.authorId, m.createdAt),
      });
      const occurredAt = this.now().toISOString();
      if (verdict.verdict === 'accept') {
        // The ledger gets the redacted copy; the raw text only sealed with the source's own key.
        // A forgotten source was recorded before: its key is not made again.
        const sealed = this.index.forgotten.has(sourceId)
          ? 'forgotten'
          : await this.keys.seal(sourceId, m.content);
        if (sealed === 'forgotten') return { kind: 'accept' as const, appended: false };
        const r = await this.writer.append({
          aggregate: 'source',
          aggregateId: sourceId,
          commandId: `recv-${m.id}`,
          causationId: null,
          correlationId: sourceId,
          occurredAt,
          expectedSeq: 0,
          event: draft('SourceReceived', {
            sourceId,
            place,
            authorId: m.authorId,
            authorIsReviewer: verdict.authorIsReviewer,
            content: sanitizeReport(m.content, { privateMarkers: this.privateMarkers }).brief,
            rawChars: visibleChars(m.content),
            sealed,
            attachments: m.attachments.slice(0, 25),
            mentionedBot: verdict.mentionedBot,
            createdAt: m.createdAt,
            via,
          }),
        });
        if (r.status === 'appended') this.index.apply(r.event);
        return { kind: 'accept' as const, appended: r.status === 'appended' };
      }
      const dayKey = `${m.authorId}|${utcDay(occurredAt)}`;
      const notice =
        verdict.reason === 'oversized' ||
        (verdict.reason === 'daily_ceiling' && !this.index.ceilingNoticed.has(dayKey));
      const r = await this.writer.append({
        aggregate: 'source',
        aggregateId: sourceId,
        commandId: `drop-${m.id}`,
        causationId: null,
        correlationId: sourceId,
        occurredAt,
        expectedSeq: 0,
        event: draft('SourceDropped', {
          sourceId,
          place,
          authorId: m.authorId,
          reason: verdict.reason,
          via,
          notice,
        }),
      });
      if (r.status === 'appended') this.index.apply(r.event);
      return {
        kind: 'drop' as const,
        appended: r.status === 'appended',
        reason: verdict.reason,
        notice,
        occurredAt,
      };
    });

    this.index.seen(m.channelId, m.id);
    if (!result.appended) {
      // Seen before (a replay, the delta, a restart): the first sighting owns its receipt and notice.
      return 'already_recorded';
    }
    if (result.kind === 'accept') {
      await this.addReadReceipt(sourceId, place);
      return 'recorded';
    }
    this.metrics.drop(result.reason);
    if (result.notice && (result.reason === 'oversized' || result.reason === 'daily_ceiling')) {
      const text = dropNotice(result.reason, this.binding) as string;
      await this.outbox.sendNotice(sourceId, place, result.reason, text, result.occurredAt, false);
    }
    return 'dropped';
  }

  /** Only after SourceReceived is durable; the PUT is idempotent, so a restart may repeat it safely. */
  async addReadReceipt(sourceId: string, place: DiscordPlace): Promise<void> {
    try {
      await this.rest.react(place.threadId ?? place.channelId, place.messageId, EYES);
    } catch (e) {
      const f = discordFailure(e);
      this.log.warn(
        { sourceId, status: f.status, code: f.code },
        'read receipt not added; retried at next start',
      );
      return;
    }
    const r = await this.writer.append({
      aggregate: 'source',
      aggregateId: sourceId,
      commandId: `rr-${place.messageId}`,
      causationId: null,
      correlationId: sourceId,
      occurredAt: this.now().toISOString(),
      ...(this.index.sourceSeq.has(sourceId)
        ? { expectedSeq: this.index.sourceSeq.get(sourceId) as number }
        : {}),
      event: draft('ReadReceiptAdded', { sourceId, messageId: place.messageId, emoji: EYES }),
    });
    if (r.status === 'appended') this.index.apply(r.event);
    else this.index.unreceipted.delete(sourceId);
  }

  /** At start: sources recorded before a crash that never got their 👀, and notices never confirmed. */
  async finishInterrupted(): Promise<{ receipts: number; notices: number }> {
    const receipts = [...this.index.unreceipted.entries()];
    for (const [sourceId, place] of receipts) await this.addReadReceipt(sourceId, place);
    const notices = [...this.index.pendingNotices.entries()];
    for (const [sourceId, n] of notices) {
      const text = dropNotice(n.reason, this.binding) as string;
      await this.outbox.sendNotice(sourceId, n.place, n.reason, text, n.droppedAt, true);
    }
    return { receipts: receipts.length, notices: notices.length };
  }

  /** Gateway messages are handled without blocking the socket; errors are logged, the delta recovers them. */
  submit(m: InboundMessage, via: Via): void {
    const p = this.ingest(m, via).catch((e: unknown) => {
      this.log.error(
        { messageId: m.id, channelId: m.channelId, err: (e as Error).message },
        'message not recorded; the next delta fetch retries it',
      );
      this.onLiveFailure(m.channelId, m.id);
    });
    this.#background.add(p);
    void p.finally(() => this.#background.delete(p));
  }

  async idle(): Promise<void> {
    while (this.#background.size > 0) await Promise.all([...this.#background]);
  }
}
