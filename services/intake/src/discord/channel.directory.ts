import { DISCORD_CODES, isDiscordCode } from './discord.errors';
import { DiscordRest, THREAD_TYPES } from './discord.rest';

export interface ChannelFacts {
  guildId: string | null;
  isThread: boolean;
  /** The parent channel of a thread; null otherwise. */
  parentId: string | null;
}

/** What the gateway client already knows about a channel, if anything (its cache). */
export type CachedChannelLookup = (channelId: string) => ChannelFacts | null;

/**
 * Where a channel sits (guild, thread parent), and a member's roles: from the gateway's cache
 * when it has them, else over REST, remembered for a while.
 */
export class ChannelDirectory {
  readonly #channels = new Map<string, ChannelFacts>();
  readonly #roles = new Map<string, { roles: string[]; until: number }>();

  constructor(
    private readonly rest: DiscordRest,
    private readonly cached: CachedChannelLookup = () => null,
    private readonly rolesTtlMs = 5 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  async channel(channelId: string): Promise<ChannelFacts> {
    const known = this.#channels.get(channelId) ?? this.cached(channelId);
    if (known) return known;
    const c = await this.rest.channel(channelId);
    const facts: ChannelFacts = {
      guildId: c.guild_id ?? null,
      isThread: THREAD_TYPES.has(c.type),
      parentId: c.parent_id ?? null,
    };
    this.#channels.set(channelId, facts);
    return facts;
  }

  /** Remembers a thread the outbox created, so its first reply needs no lookup. */
  rememberThread(threadId: string, parentId: string, guildId: string): void {
    this.#channels.set(threadId, { guildId, isThread: true, parentId });
  }

  async roles(guildId: string, userId: string): Promise<string[]> {
    const key = `${guildId}|${userId}`;
    const hit = this.#roles.get(key);
    if (hit && hit.until > this.now()) return hit.roles;
    let roles: string[];
    try {
      roles = await this.rest.memberRoles(guildId, userId);
    } catch (e) {
      // Not a member (any more): no roles, so not a reporter by role.
      if (!isDiscordCode(e, DISCORD_CODES.unknownMember) && !isDiscordCode(e, DISCORD_CODES.unknownUser))
        throw e;
      roles = [];
    }
    this.#roles.set(key, { roles, until: this.now() + this.rolesTtlMs });
    return roles;
  }
}
