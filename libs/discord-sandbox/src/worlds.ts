import { DiscordApiError } from './errors';
import type { DiscordWorld } from './world';

/**
 * The guilds the bot is in. The first is the one the sandbox is about; others exist so a client can
 * see traffic from a server it is not bound to. Users and the bot share ids across guilds.
 */
export class Worlds {
  constructor(readonly all: readonly DiscordWorld[]) {
    if (all.length === 0) throw new Error('at least one guild');
  }

  get primary(): DiscordWorld {
    return this.all[0] as DiscordWorld;
  }

  /** The guild holding this channel or thread; the primary one otherwise (which then answers 10003). */
  byChannel(channelId: string): DiscordWorld {
    return this.all.find((w) => w.channels.has(channelId) || w.threads.has(channelId)) ?? this.primary;
  }

  byGuild(guildId: string): DiscordWorld {
    const world = this.all.find((w) => w.guildId === guildId);
    if (!world) throw new DiscordApiError('unknownGuild');
    return world;
  }

  byMessage(messageId: string): DiscordWorld | undefined {
    return this.all.find((w) => w.findMessage(messageId) !== undefined);
  }
}
