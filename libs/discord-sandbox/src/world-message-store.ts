import { DiscordApiError } from './errors';
import { compareSnowflakes } from './snowflake';
import type { WorldGuild } from './world-guild';
import type { MessageRecord, ReactionRecord } from './world-types';

/**
 * Every message of the guild's channels and threads, by channel (oldest first) and by id, the
 * reactions on them, and the nonces Discord remembers for deduplication.
 */
export class MessageStore {
  private readonly byChannel = new Map<string, MessageRecord[]>();
  private readonly byId = new Map<string, MessageRecord>();
  private readonly reactionsByMessage = new Map<string, Map<string, ReactionRecord>>();
  private readonly nonces = new Map<string, { messageId: string; at: number }>();

  constructor(private readonly guild: WorldGuild) {
    for (const channelId of guild.channels.keys()) this.byChannel.set(channelId, []);
  }

  /** A new thread's (empty) history. */
  openChannel(channelId: string): void {
    this.byChannel.set(channelId, []);
  }

  message(channelId: string, messageId: string): MessageRecord {
    this.guild.messageable(channelId);
    const message = this.byId.get(messageId);
    if (!message || message.channelId !== channelId) throw new DiscordApiError('unknownMessage');
    return message;
  }

  findMessage(messageId: string): MessageRecord | undefined {
    return this.byId.get(messageId);
  }

  /** Oldest first. */
  messagesIn(channelId: string): MessageRecord[] {
    this.guild.messageable(channelId);
    return [...(this.byChannel.get(channelId) ?? [])];
  }

  add(message: MessageRecord): void {
    this.byChannel.get(message.channelId)?.push(message) ?? this.byChannel.set(message.channelId, [message]);
    this.byId.set(message.id, message);
  }

  remove(message: MessageRecord): void {
    const list = this.byChannel.get(message.channelId) ?? [];
    list.splice(list.indexOf(message), 1);
    this.byId.delete(message.id);
    this.reactionsByMessage.delete(message.id);
  }

  nonce(key: string): { messageId: string; at: number } | undefined {
    return this.nonces.get(key);
  }

  rememberNonce(key: string, messageId: string, at: number): void {
    this.nonces.set(key, { messageId, at });
  }

  /** The message's reactions by emoji key, to change in place; created empty when asked to. */
  reactions(messageId: string, create: true): Map<string, ReactionRecord>;
  reactions(messageId: string, create?: false): Map<string, ReactionRecord> | undefined;
  reactions(messageId: string, create = false): Map<string, ReactionRecord> | undefined {
    const existing = this.reactionsByMessage.get(messageId);
    if (existing || !create) return existing;
    const byEmoji = new Map<string, ReactionRecord>();
    this.reactionsByMessage.set(messageId, byEmoji);
    return byEmoji;
  }

  /** Copies of the message's reactions. */
  reactionsOn(messageId: string): ReactionRecord[] {
    return [...(this.reactionsByMessage.get(messageId)?.values() ?? [])].map((r) => ({
      emoji: { ...r.emoji },
      userIds: [...r.userIds],
    }));
  }

  /** Discord's history query: newest → oldest, `limit` 1..100 (default 50). */
  history(
    channelId: string,
    query: { after?: string | null; before?: string | null; around?: string | null; limit?: number },
  ): MessageRecord[] {
    const all = this.messagesIn(channelId);
    const limit = query.limit ?? 50;
    let page: MessageRecord[];
    if (query.after) {
      const after = query.after;
      page = all.filter((m) => compareSnowflakes(m.id, after) > 0).slice(0, limit);
    } else if (query.before) {
      const before = query.before;
      page = all.filter((m) => compareSnowflakes(m.id, before) < 0).slice(-limit);
    } else if (query.around) {
      const around = query.around;
      const index = all.findIndex((m) => compareSnowflakes(m.id, around) >= 0);
      const centre = index < 0 ? all.length : index;
      const start = Math.max(0, centre - Math.floor(limit / 2));
      page = all.slice(start, start + limit);
    } else {
      page = all.slice(-limit);
    }
    return page.reverse();
  }
}
