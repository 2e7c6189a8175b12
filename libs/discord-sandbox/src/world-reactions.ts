import { DiscordApiError } from './errors';
import type { WorldContext } from './world-context';
import { Intents } from './world-types';

/** Reactions on messages: added and removed one user and one emoji at a time. */
export class WorldReactions {
  constructor(private readonly ctx: WorldContext) {}

  addReaction(channelId: string, messageId: string, rawEmoji: string, userId: string): boolean {
    const { guild, store, render } = this.ctx;
    const message = store.message(channelId, messageId);
    const emoji = parseEmoji(rawEmoji);
    // No reactions in an archived thread (Threads topic, Active & Archived Threads): 50083.
    const target = guild.messageable(channelId);
    if (target.kind === 'thread' && target.thread.archived) throw new DiscordApiError('threadArchived');
    const byEmoji = store.reactions(message.id, true);
    const key = emoji.id ?? emoji.name;
    const reaction = byEmoji.get(key) ?? { emoji, userIds: [] };
    byEmoji.set(key, reaction);
    if (reaction.userIds.includes(userId)) return false;
    reaction.userIds.push(userId);
    this.ctx.emit({
      t: 'MESSAGE_REACTION_ADD',
      d: {
        user_id: userId,
        channel_id: channelId,
        message_id: messageId,
        guild_id: guild.guildId,
        member: render.renderMember(guild.member(userId)),
        emoji: { id: emoji.id, name: emoji.name },
        message_author_id: message.authorId,
        burst: false,
        burst_colors: [],
        type: 0,
      },
      intent: Intents.GuildMessageReactions,
    });
    return true;
  }

  removeReaction(channelId: string, messageId: string, rawEmoji: string, userId: string): boolean {
    const message = this.ctx.store.message(channelId, messageId);
    const emoji = parseEmoji(rawEmoji);
    const byEmoji = this.ctx.store.reactions(message.id);
    const key = emoji.id ?? emoji.name;
    const reaction = byEmoji?.get(key);
    if (!reaction || !reaction.userIds.includes(userId)) return false;
    reaction.userIds = reaction.userIds.filter((u) => u !== userId);
    if (reaction.userIds.length === 0) byEmoji?.delete(key);
    this.ctx.emit({
      t: 'MESSAGE_REACTION_REMOVE',
      d: {
        user_id: userId,
        channel_id: channelId,
        message_id: messageId,
        guild_id: this.ctx.guild.guildId,
        emoji: { id: emoji.id, name: emoji.name },
        burst: false,
        type: 0,
      },
      intent: Intents.GuildMessageReactions,
    });
    return true;
  }
}

const EMOJI_CHARS = /^(?:\p{Extended_Pictographic}|\p{Emoji_Component}|\u200d|\ufe0f|\u20e3)+$/u;
const EMOJI_ANCHOR = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3/u;

/**
 * The emoji path segment, already percent-decoded by the router. A unicode emoji or `name:id` of a
 * guild emoji (this guild has none); anything else is 10014, as on Discord.
 */
export function parseEmoji(raw: string): { id: string | null; name: string } {
  if (EMOJI_CHARS.test(raw) && EMOJI_ANCHOR.test(raw)) return { id: null, name: raw };
  throw new DiscordApiError('unknownEmoji');
}
