import { DiscordPlace } from '@caseloop/contracts';
import { discordFailure } from '../discord/discord.errors';
import { DiscordRest } from '../discord/discord.rest';
import { IntakeIndex } from '../intake/intake-index';
import { IntakeLog } from '../ops/intake.metrics';
import { DeliveryJournal } from './delivery.journal';
import { OutboxOptions } from './delivery.request';
import { noticeNonce } from './nonce';
import { OwnMessageFinder } from './own-message.finder';

/**
 * The one fixed line answering a dropped message (oversized, daily ceiling), on the message's
 * source subject. Same nonce on every attempt; after a crash, Discord is asked before re-posting.
 */
export class DropNoticeSender {
  constructor(
    private readonly rest: DiscordRest,
    private readonly finder: OwnMessageFinder,
    private readonly journal: DeliveryJournal,
    private readonly index: IntakeIndex,
    private readonly opts: Pick<OutboxOptions, 'dedupeWindowMs'>,
    private readonly log: IntakeLog,
    private readonly now: () => Date,
  ) {}

  async send(
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
      ? await this.finder.find(target, { content: text, intendedAt: droppedAt }).catch(() => null)
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
    await this.journal.noticeSent(sourceId, place, reason, messageId);
  }
}
