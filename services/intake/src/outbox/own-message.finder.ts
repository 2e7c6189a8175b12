import { DependencyUnavailable, TransientError } from '@caseloop/ledger';
import { DISCORD_CODES, discordFailure, isDiscordCode } from '../discord/discord.errors';
import { DiscordRest, FetchedMessage } from '../discord/discord.rest';
import { OutboxOptions } from './delivery.request';
import { contentFingerprint, snowflakeAt, snowflakeMs } from './fingerprint';

/** Clock difference tolerated between intake and Discord when reading back an intent's window. */
const CLOCK_SKEW_MS = 60_000;

/** Reads Discord's history back to find a post of ours whose outcome was not recorded. */
export class OwnMessageFinder {
  constructor(
    private readonly rest: DiscordRest,
    private readonly selfId: string,
    private readonly opts: Pick<OutboxOptions, 'dedupeWindowMs' | 'reconcileFetchLimit'>,
  ) {}

  /**
   * Our post of `content` for an intent, as Discord has it now. A re-fetched message carries no
   * nonce, so it is recognised by what is left: our author, this channel or thread, a content
   * fingerprint that survives Discord's normalisation, created inside the intent's window (from the
   * intent, less clock skew, to the end of the dedupe window: nothing outside it was sent for
   * this intent), and not already confirmed as another chunk. History is read forward from the
   * window's start (`after=`), so later chatter in the thread cannot push the post out of reach.
   */
  async find(
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
      const f = discordFailure(e);
      if (f.status === 0 || f.status >= 500 || f.status === 429)
        throw new DependencyUnavailable(
          'discord',
          `reconciliation could not read ${channelId}: ${f.message}`,
          {
            cause: e,
          },
        );
      throw new TransientError(`reconciliation could not read ${channelId}`, { cause: e });
    }
  }
}
