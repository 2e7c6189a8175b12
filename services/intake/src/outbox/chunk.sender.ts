import { RecordedEvent } from '@caseloop/contracts';
import { DependencyUnavailable } from '@caseloop/ledger';
import { ChannelDirectory } from '../discord/channel.directory';
import { DISCORD_CODES, discordFailure, isDiscordCode } from '../discord/discord.errors';
import { DiscordRest } from '../discord/discord.rest';
import { IntakeIndex } from '../intake/intake-index';
import { IntakeLog } from '../ops/intake.metrics';
import { ChunkProgress } from './delivery.decider';
import { DeliveryJournal, IntendedChunk, RefusalReason } from './delivery.journal';
import { DeliverySpec, OutboxOptions } from './delivery.request';
import { sha256Hex } from './nonce';
import { OwnMessageFinder } from './own-message.finder';
import { DISCORD_ATTACHMENT_LIMIT_BYTES, fetchProof, ProofFile, proofCandidate } from './proof-attachment';

/** One chunk of a delivery and where its outcomes are recorded. */
export interface ChunkAt {
  spec: DeliverySpec;
  chunks: string[];
  i: number;
  progress: Map<number, ChunkProgress>;
}

/**
 * Puts one chunk on Discord, idempotently: a first post journaled before its nonce-enforced POST,
 * or an open intent resolved against what Discord has (re-posted with the same nonce only inside
 * Discord's dedupe window). Every outcome goes to the journal; a failed POST is classified once.
 */
export class ChunkSender {
  constructor(
    private readonly rest: DiscordRest,
    private readonly directory: ChannelDirectory,
    private readonly index: IntakeIndex,
    private readonly journal: DeliveryJournal,
    private readonly finder: OwnMessageFinder,
    private readonly opts: Pick<OutboxOptions, 'dedupeWindowMs' | 'maxAttachmentBytes'>,
    private readonly log: IntakeLog,
    private readonly now: () => Date,
  ) {}

  async post(
    at: ChunkAt,
    components: readonly unknown[],
    proofFrom: readonly RecordedEvent[] | null,
  ): Promise<void> {
    const { spec, chunks, i, progress } = at;
    const content = chunks[i] as string;
    const files = proofFrom ? await this.#proofFiles(spec, proofFrom, chunks.join('\n')) : [];
    let threadId: string;
    try {
      threadId = await this.#ensureThread(spec);
    } catch (e) {
      return this.#failed(at, e);
    }
    const intent = await this.journal.intend(spec, chunks, i, threadId, progress);
    const body = {
      content,
      nonce: intent.nonce,
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
      return this.#failed(at, e);
    }
    await this.journal.confirm(spec, i, posted.id, threadId, false, progress);
  }

  async reconcile(
    at: ChunkAt,
    intent: IntendedChunk,
    confirmedInCase: ReadonlySet<string>,
    components: readonly unknown[],
  ): Promise<void> {
    const { spec, chunks, i, progress } = at;
    const target = intent.threadId ?? intent.channelId;
    const content = chunks[i] as string;
    if (sha256Hex(content) !== intent.contentSha256) {
      await this.#refuse(at, 'discord_error', 'the chunk no longer matches its intent');
      return;
    }
    const found = await this.finder.find(target, {
      content,
      intendedAt: intent.intendedAt,
      claimed: new Set([...confirmedInCase, ...claimedMessageIds(progress)]),
    });
    if (found) {
      this.log.info(
        { caseId: spec.caseId, deliveryId: spec.deliveryId, chunk: i },
        'reconciled: Discord has the chunk',
      );
      await this.journal.confirm(spec, i, found.id, intent.threadId, true, progress);
      return;
    }
    const age = this.now().getTime() - Date.parse(intent.intendedAt);
    if (age > this.opts.dedupeWindowMs) {
      await this.#refuse(
        at,
        'ambiguous_outside_window',
        `intent is ${Math.round(age / 1000)} s old; re-posting could duplicate it`,
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
      return this.#failed(at, e);
    }
    await this.journal.confirm(spec, i, posted.id, intent.threadId, true, progress);
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
  async #failed(at: ChunkAt, e: unknown): Promise<void> {
    const { spec, i } = at;
    const f = discordFailure(e);
    if (f.status >= 400 && f.status < 500 && f.status !== 429) {
      // 10008 to a nonce-enforced POST: Discord remembers the nonce of a message since deleted and
      // posts nothing; someone removed our post, so it is not put back.
      const reason: RefusalReason =
        f.code === DISCORD_CODES.unknownMessage
          ? 'message_deleted'
          : f.code === DISCORD_CODES.threadArchived
            ? 'thread_locked'
            : f.code === DISCORD_CODES.unknownChannel || f.code === DISCORD_CODES.missingAccess
              ? 'channel_gone'
              : 'discord_error';
      await this.#refuse(at, reason, `${f.status} ${f.code ?? ''} ${f.message}`.trim());
      return;
    }
    this.log.warn(
      { caseId: spec.caseId, deliveryId: spec.deliveryId, chunk: i, status: f.status },
      'delivery outcome unknown; will reconcile',
    );
    // No answer, a 5xx or a rate limit past discord.js's own retries: Discord is down, not the event.
    throw new DependencyUnavailable('discord', `delivery ${spec.deliveryId} chunk ${i}: ${f.message}`, {
      cause: e,
    });
  }

  #refuse(at: ChunkAt, reason: RefusalReason, detail: string): Promise<void> {
    return this.journal.refuse(at.spec, at.chunks.length, at.i, reason, detail, at.progress);
  }
}

/** Messages already confirmed as a chunk of this delivery: a reconcile must not claim one twice. */
function claimedMessageIds(progress: ReadonlyMap<number, ChunkProgress>): Set<string> {
  const ids = new Set<string>();
  for (const p of progress.values()) if (p.status === 'confirmed') ids.add(p.discordMessageId);
  return ids;
}
