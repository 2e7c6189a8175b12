import { createHash } from 'node:crypto';
import { DiscordPlace, draft, RecordedEvent } from '@caseloop/contracts';
import { EventStore, TransientError } from '@caseloop/ledger';
import { commandDeliveryId, commandRefusalLine } from '../commands/command.replies';
import { ChannelDirectory } from '../discord/channel.directory';
import { DISCORD_CODES, discordFailure, isDiscordCode } from '../discord/discord.errors';
import { DiscordRest, FetchedMessage } from '../discord/discord.rest';
import { IntakeIndex, OpenIntent } from '../intake/intake-index';
import { KeyedSerializer } from '../intake/keyed-serializer';
import { IntakeLedgerWriter } from '../intake/ledger-writer';
import { IntakeLog, IntakeMetrics } from '../ops/intake.metrics';
import { linkReviewButtons, receiptButtons } from '../commands/decision-components';
import { statusDeliveryId, statusPlaceholder } from '../status/case-status';
import { splitIntoChunks } from './chunking';
import { DISCORD_ATTACHMENT_LIMIT_BYTES, fetchProof, ProofFile, proofCandidate } from './proof-attachment';
import { ChunkProgress, deliveryProgress, nextDeliveryStep } from './delivery.decider';
import { contentFingerprint, snowflakeAt, snowflakeMs } from './fingerprint';
import { chunkNonce, noticeNonce, sha256Hex } from './nonce';

export interface OutboxOptions {
  replyChunkSize: number;
  /** How long Discord is trusted to deduplicate a nonce; outside it an unresolved post is refused, never re-sent. */
  dedupeWindowMs: number;
  /** How many recent messages reconciliation reads back. */
  reconcileFetchLimit: number;
  /** Largest capture attached to a receipt inline (default Discord's 10 MiB); larger ones stay a link. */
  maxAttachmentBytes?: number;
}

export interface DeliverySpec {
  caseId: string;
  deliveryId: string;
  sourceId: string;
  place: DiscordPlace;
  content: string;
  causationId: string | null;
  correlationId: string;
  /** Display name of a thread created for this case. */
  threadName: string;
  /** What the coordinator asked for (a receipt and a link review get decision buttons). */
  kind?: DeliveryKind;
  receiptId?: string | null;
}

type DeliveryKind = RecordedEvent<'DeliveryRequested'>['data']['kind'];

/** Clock difference tolerated between intake and Discord when reading back an intent's window. */
const CLOCK_SKEW_MS = 60_000;
type RefusalReason =
  | 'too_long'
  | 'discord_error'
  | 'ambiguous_outside_window'
  | 'channel_gone'
  | 'previous_chunk_unconfirmed'
  | 'message_deleted'
  | 'thread_locked';
/** Command ids are unique stream-wide (case, chunk, delivery) and fit the 128-character safe-id rule. */
const cmdId = (prefix: string, ...parts: (string | number)[]): string => {
  const plain = `${prefix}-${parts.join('-')}`;
  return plain.length <= 120
    ? plain
    : `${prefix}-${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 40)}`;
};

/**
 * The only writer of messages to Discord. Every chunk is journaled (DeliveryIntended) before its
 * POST and resolved after (DeliveryConfirmed / DeliveryRefused); an intent left open by a crash is
 * reconciled against what Discord actually has before anything else is posted.
 */
export class DeliveryOutbox {
  readonly #perCase = new KeyedSerializer();
  #closing = false;

  constructor(
    private readonly writer: IntakeLedgerWriter,
    private readonly store: EventStore,
    private readonly rest: DiscordRest,
    private readonly directory: ChannelDirectory,
    private readonly index: IntakeIndex,
    private readonly selfId: string,
    private readonly opts: OutboxOptions,
    private readonly log: IntakeLog,
    private readonly metrics: IntakeMetrics,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A coordinator's DeliveryRequested, as the transport hands it over (redelivery-safe). */
  async onDeliveryRequested(e: RecordedEvent<'DeliveryRequested'>): Promise<void> {
    await this.deliver({
      caseId: e.aggregateId,
      deliveryId: e.data.deliveryId,
      sourceId: e.data.sourceId,
      place: e.data.place,
      content: e.data.content,
      causationId: e.eventId,
      correlationId: e.correlationId,
      threadName: `Case ${e.aggregateId}`,
      kind: e.data.kind,
      receiptId: e.data.receiptId,
    });
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
      const spec = this.#specFromLedger(intent.caseId, intent.deliveryId, events);
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
      switch (step.kind) {
        case 'done':
          return;
        case 'refuse':
          await this.#refuse(
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
          await this.#reconcile(
            spec,
            chunks,
            step.index,
            progress.get(step.index) as Extract<ChunkProgress, { status: 'intended' }>,
            progress,
            claimed,
            step.index === chunks.length - 1 ? buttons : [],
          );
          continue;
        case 'post': {
          const last = step.index === chunks.length - 1;
          await this.#post(spec, chunks, step.index, progress, last ? buttons : [], last ? events : null);
          continue;
        }
      }
    }
  }

  async #post(
    spec: DeliverySpec,
    chunks: string[],
    i: number,
    progress: Map<number, ChunkProgress>,
    components: readonly unknown[],
    proofFrom: readonly RecordedEvent[] | null,
  ): Promise<void> {
    const content = chunks[i] as string;
    const files = proofFrom ? await this.#proofFiles(spec, proofFrom, chunks.join('\n')) : [];
    let threadId: string;
    try {
      threadId = await this.#ensureThread(spec);
    } catch (e) {
      return this.#failed(spec, chunks.length, i, e, progress);
    }
    const intent = draft('DeliveryIntended', {
      deliveryId: spec.deliveryId,
      chunkIndex: i,
      sourceId: spec.sourceId,
      chunkCount: chunks.length,
      nonce: chunkNonce(spec.deliveryId, i),
      channelId: spec.place.channelId,
      threadId,
      contentSha256: sha256Hex(content),
      length: content.length,
      intendedAt: this.now().toISOString(),
    });
    const journaled = await this.writer.append(
      this.#meta(spec, cmdId('intend', spec.caseId, i, spec.deliveryId), intent),
    );
    if (journaled.status === 'appended') this.index.apply(journaled.event);
    progress.set(i, {
      status: 'intended',
      nonce: intent.data.nonce,
      channelId: intent.data.channelId,
      threadId,
      contentSha256: intent.data.contentSha256,
      intendedAt: intent.data.intendedAt,
    });
    const body = {
      content,
      nonce: intent.data.nonce,
      replyTo: i === 0 ? spec.place.messageId : null,
      components,
    };
    let posted: { id: string };
    try {
      try {
        posted = await this.rest.post(threadId, { ...body, files });
      } catch (e) {
        // Refused for the file (no ATTACH_FILES there): nothing was stored, so the same nonce posts
        // the receipt without it; its text carries the link to the capture.
        if (files.length === 0 || !isDiscordCode(e, DISCORD_CODES.missingPermissions)) throw e;
        this.log.warn(
          { caseId: spec.caseId, receiptId: spec.receiptId, code: DISCORD_CODES.missingPermissions },
          'receipt capture left as a link: the bot may not attach files in this thread',
        );
        posted = await this.rest.post(threadId, body);
      }
    } catch (e) {
      return this.#failed(spec, chunks.length, i, e, progress);
    }
    await this.#confirm(spec, i, posted.id, threadId, false, progress);
  }

  /**
   * The receipt's privacy-reviewed screenshot as an inline image, when it may be shown, is within
   * Discord's size limit and reads back with the digest the receipt names; else none, and the
   * receipt's link stands for it.
   */
  async #proofFiles(
    spec: DeliverySpec,
    events: readonly RecordedEvent[],
    content: string,
  ): Promise<ProofFile[]> {
    if (spec.kind !== 'receipt') return [];
    const candidate = proofCandidate(events, spec.receiptId ?? null, content);
    if (!candidate) return [];
    const got = await fetchProof(candidate, this.opts.maxAttachmentBytes ?? DISCORD_ATTACHMENT_LIMIT_BYTES);
    if ('skipped' in got) {
      this.log.info(
        { caseId: spec.caseId, receiptId: spec.receiptId, skipped: got.skipped },
        'receipt capture left as a link',
      );
      return [];
    }
    return [got];
  }

  /** Top-level reports get a thread on their message; the thread's id is the message's id. */
  async #ensureThread(spec: DeliverySpec): Promise<string> {
    if (spec.place.threadId) return spec.place.threadId;
    const { channelId, messageId, guildId } = spec.place;
    if (this.index.caseThreads.has(messageId)) return messageId;
    try {
      const t = await this.rest.startThread(channelId, messageId, spec.threadName);
      this.directory.rememberThread(t.id, channelId, guildId);
      return t.id;
    } catch (e) {
      if (!isDiscordCode(e, DISCORD_CODES.threadAlreadyCreated)) throw e;
      this.directory.rememberThread(messageId, channelId, guildId);
      return messageId;
    }
  }

  /**
   * A POST that failed after discord.js's own retries. A definite refusal (4xx) ends the chunk;
   * anything else may have been stored, so the intent stays open and the delivery is retried later
   * through reconciliation.
   */
  async #failed(
    spec: DeliverySpec,
    count: number,
    i: number,
    e: unknown,
    progress: Map<number, ChunkProgress>,
  ): Promise<void> {
    const f = discordFailure(e);
    if (f.status >= 400 && f.status < 500 && f.status !== 429) {
      // 10008 to a nonce-enforced POST: Discord remembers the nonce of a message since deleted and
      // posts nothing; someone removed our post, so it is not put back.
      const reason: RefusalReason =
        f.code === DISCORD_CODES.unknownMessage
          ? 'message_deleted'
          : f.code === DISCORD_CODES.threadLocked
            ? 'thread_locked'
            : f.code === DISCORD_CODES.unknownChannel || f.code === DISCORD_CODES.missingAccess
              ? 'channel_gone'
              : 'discord_error';
      await this.#refuse(spec, count, i, reason, `${f.status} ${f.code ?? ''} ${f.message}`.trim(), progress);
      return;
    }
    this.log.warn(
      { caseId: spec.caseId, deliveryId: spec.deliveryId, chunk: i, status: f.status },
      'delivery outcome unknown; will reconcile',
    );
    throw new TransientError(`delivery ${spec.deliveryId} chunk ${i}: ${f.message}`, { cause: e });
  }

  async #reconcile(
    spec: DeliverySpec,
    chunks: string[],
    i: number,
    intent: Extract<ChunkProgress, { status: 'intended' }>,
    progress: Map<number, ChunkProgress>,
    confirmedInCase: ReadonlySet<string>,
    components: readonly unknown[],
  ): Promise<void> {
    const target = intent.threadId ?? intent.channelId;
    const content = chunks[i] as string;
    if (sha256Hex(content) !== intent.contentSha256) {
      await this.#refuse(
        spec,
        chunks.length,
        i,
        'discord_error',
        'the chunk no longer matches its intent',
        progress,
      );
      return;
    }
    const found = await this.findOwnMessage(target, {
      content,
      intendedAt: intent.intendedAt,
      claimed: new Set([...confirmedInCase, ...claimedMessageIds(progress)]),
    });
    if (found) {
      this.log.info(
        { caseId: spec.caseId, deliveryId: spec.deliveryId, chunk: i },
        'reconciled: Discord has the chunk',
      );
      await this.#confirm(spec, i, found.id, intent.threadId, true, progress);
      return;
    }
    const age = this.now().getTime() - Date.parse(intent.intendedAt);
    if (age > this.opts.dedupeWindowMs) {
      await this.#refuse(
        spec,
        chunks.length,
        i,
        'ambiguous_outside_window',
        `intent is ${Math.round(age / 1000)} s old; re-posting could duplicate it`,
        progress,
      );
      return;
    }
    let posted: { id: string };
    try {
      // Same nonce, inside Discord's window: if the first POST was stored, this returns it.
      posted = await this.rest.post(target, {
        content,
        nonce: intent.nonce,
        replyTo: i === 0 ? spec.place.messageId : null,
        components,
      });
    } catch (e) {
      return this.#failed(spec, chunks.length, i, e, progress);
    }
    await this.#confirm(spec, i, posted.id, intent.threadId, true, progress);
  }

  /**
   * Our post of `content` for an intent, as Discord has it now. A re-fetched message carries no
   * nonce, so it is recognised by what is left: our author, this channel or thread, a content
   * fingerprint that survives Discord's normalisation, created inside the intent's window (from the
   * intent, less clock skew, to the end of the dedupe window: nothing outside it was sent for
   * this intent), and not already confirmed as another chunk. History is read forward from the
   * window's start (`after=`), so later chatter in the thread cannot push the post out of reach.
   */
  async findOwnMessage(
    channelId: string,
    want: { content: string; intendedAt: string; claimed?: ReadonlySet<string> },
  ): Promise<FetchedMessage | null> {
    const from = Date.parse(want.intendedAt) - CLOCK_SKEW_MS;
    const until = Date.parse(want.intendedAt) + this.opts.dedupeWindowMs + CLOCK_SKEW_MS;
    const fingerprint = contentFingerprint(want.content);
    let after = snowflakeAt(from);
    let read = 0;
    try {
      while (read < this.opts.reconcileFetchLimit) {
        const limit = Math.min(100, this.opts.reconcileFetchLimit - read);
        const page = await this.rest.messagesAfter(channelId, after, limit);
        read += page.length;
        // Oldest first: the earliest matching post is the one this intent made.
        const ordered = [...page].reverse();
        const match = ordered.find(
          (m) =>
            m.author.id === this.selfId &&
            !want.claimed?.has(m.id) &&
            snowflakeMs(m.id) <= until &&
            contentFingerprint(m.content) === fingerprint,
        );
        if (match) return match;
        const newest = page[0];
        if (page.length < limit || !newest || snowflakeMs(newest.id) > until) return null;
        after = newest.id;
      }
      return null;
    } catch (e) {
      if (isDiscordCode(e, DISCORD_CODES.unknownChannel)) return null;
      throw new TransientError(`reconciliation could not read ${channelId}`, { cause: e });
    }
  }

  async #confirm(
    spec: DeliverySpec,
    i: number,
    discordMessageId: string,
    threadId: string | null,
    reconciled: boolean,
    progress: Map<number, ChunkProgress>,
  ): Promise<void> {
    const ev = draft('DeliveryConfirmed', {
      deliveryId: spec.deliveryId,
      chunkIndex: i,
      sourceId: spec.sourceId,
      discordMessageId,
      channelId: spec.place.channelId,
      threadId,
      reconciled,
    });
    const r = await this.writer.append(
      this.#meta(spec, cmdId('confirm', spec.caseId, i, spec.deliveryId), ev),
    );
    if (r.status === 'appended') this.index.apply(r.event);
    progress.set(i, { status: 'confirmed', discordMessageId, threadId });
    this.metrics.delivered.inc();
  }

  async #refuse(
    spec: DeliverySpec,
    count: number,
    i: number,
    reason: RefusalReason,
    detail: string,
    progress: Map<number, ChunkProgress>,
  ): Promise<void> {
    const ev = draft('DeliveryRefused', {
      deliveryId: spec.deliveryId,
      chunkIndex: i,
      sourceId: spec.sourceId,
      reason,
      detail: detail.slice(0, 500),
    });
    const r = await this.writer.append(
      this.#meta(spec, cmdId('refuse', spec.caseId, i, spec.deliveryId), ev),
    );
    if (r.status === 'appended') this.index.apply(r.event);
    progress.set(i, { status: 'refused', reason });
    this.metrics.refused.inc({ kind: 'delivery' });
    this.log.warn(
      { caseId: spec.caseId, deliveryId: spec.deliveryId, chunk: i, chunks: count, reason },
      'delivery chunk refused',
    );
  }

  #meta(spec: DeliverySpec, commandId: string, event: ReturnType<typeof draft>) {
    return {
      aggregate: 'case' as const,
      aggregateId: spec.caseId,
      commandId,
      causationId: spec.causationId,
      correlationId: spec.correlationId,
      occurredAt: this.now().toISOString(),
      event,
    };
  }

  /** Rebuilds what a delivery was meant to say from the case's own events. */
  #specFromLedger(caseId: string, deliveryId: string, events: RecordedEvent[]): DeliverySpec | null {
    if (deliveryId === statusDeliveryId(caseId)) {
      const opened = events.find((e): e is RecordedEvent<'CaseOpened'> => e.type === 'CaseOpened');
      return opened
        ? {
            caseId,
            deliveryId,
            sourceId: opened.data.sourceId,
            place: opened.data.place,
            content: statusPlaceholder(caseId),
            causationId: null,
            correlationId: opened.data.sourceId,
            threadName: `Case ${caseId}`,
            kind: 'notice',
          }
        : null;
    }
    for (const e of events) {
      if (e.type === 'DeliveryRequested' && e.data.deliveryId === deliveryId) {
        return {
          caseId,
          deliveryId,
          sourceId: e.data.sourceId,
          place: e.data.place,
          content: e.data.content,
          causationId: e.eventId,
          correlationId: e.correlationId,
          threadName: `Case ${caseId}`,
          kind: e.data.kind,
          receiptId: e.data.receiptId,
        };
      }
      if (e.type === 'CommandRefused' && commandDeliveryId(e.data.messageId) === deliveryId) {
        const intent = events.find((x) => x.type === 'DeliveryIntended' && x.data.deliveryId === deliveryId);
        if (!intent || intent.type !== 'DeliveryIntended') return null;
        return {
          caseId,
          deliveryId,
          sourceId: intent.data.sourceId,
          place: {
            guildId: '0',
            channelId: intent.data.channelId,
            threadId: intent.data.threadId,
            messageId: e.data.messageId,
          },
          content: commandRefusalLine(e.data.reason),
          causationId: e.eventId,
          correlationId: e.correlationId,
          threadName: `Case ${caseId}`,
        };
      }
    }
    return null;
  }

  /**
   * The one fixed line answering a dropped message (oversized, daily ceiling), on the message's
   * source subject. Same nonce on every attempt; after a crash, Discord is asked before re-posting.
   */
  async sendNotice(
    sourceId: string,
    place: DiscordPlace,
    reason: 'oversized' | 'daily_ceiling',
    text: string,
    droppedAt: string,
    afterRestart: boolean,
  ): Promise<void> {
    const target = place.threadId ?? place.channelId;
    const nonce = noticeNonce(place.messageId);
    let messageId: string | null = null;
    const existing = afterRestart
      ? await this.findOwnMessage(target, { content: text, intendedAt: droppedAt }).catch(() => null)
      : null;
    if (existing) messageId = existing.id;
    else if (this.now().getTime() - Date.parse(droppedAt) <= this.opts.dedupeWindowMs) {
      try {
        messageId = (await this.rest.post(target, { content: text, nonce, replyTo: place.messageId })).id;
      } catch (e) {
        this.log.warn({ sourceId, reason, status: discordFailure(e).status }, 'drop notice not posted');
        return;
      }
    } else {
      this.log.warn({ sourceId, reason }, 'drop notice outside the dedupe window; not re-posted');
      this.index.pendingNotices.delete(sourceId);
      return;
    }
    const r = await this.writer.append({
      aggregate: 'source',
      aggregateId: sourceId,
      commandId: cmdId('notice', place.messageId),
      causationId: null,
      correlationId: sourceId,
      occurredAt: this.now().toISOString(),
      event: draft('DropNoticeSent', { sourceId, reason, discordMessageId: messageId }),
      ...(this.index.sourceSeq.has(sourceId)
        ? { expectedSeq: this.index.sourceSeq.get(sourceId) as number }
        : {}),
    });
    if (r.status === 'appended') this.index.apply(r.event);
    else this.index.pendingNotices.delete(sourceId);
  }
}

/** Messages already confirmed as a chunk of this delivery: a reconcile must not claim one twice. */
function claimedMessageIds(progress: ReadonlyMap<number, ChunkProgress>): Set<string> {
  const ids = new Set<string>();
  for (const p of progress.values()) if (p.status === 'confirmed') ids.add(p.discordMessageId);
  return ids;
}

/**
 * The decision row under a delivery's last chunk: Approve / Request changes / Reject on a receipt,
 * Same case / Different on a link review (the review still pending for the delivery's source).
 * The text commands stay valid; the buttons only spare typing them.
 */
function decisionButtons(spec: DeliverySpec, events: readonly RecordedEvent[]): unknown[] {
  if (spec.kind === 'receipt') return receiptButtons(spec.receiptId ?? null);
  if (spec.kind !== 'link_review') return [];
  const settled = new Set(events.flatMap((e) => (e.type === 'LinkReviewSettled' ? [e.data.reviewId] : [])));
  const review = events
    .filter(
      (e): e is RecordedEvent<'LinkReviewRequested'> =>
        e.type === 'LinkReviewRequested' &&
        e.data.sourceId === spec.sourceId &&
        !settled.has(e.data.reviewId),
    )
    .at(-1);
  return review ? linkReviewButtons(review.data.reviewId) : [];
}
