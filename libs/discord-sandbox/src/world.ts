import { normaliseEmbeds, normaliseMessageComponents } from './components';
import { DiscordApiError, invalidForm } from './errors';
import {
  computePermissions,
  OverwriteType,
  Permission,
  type PermissionOverwrite,
  renderOverwrite,
  usablePermissions,
} from './permissions';
import type { ChannelMode, ParsedSeed, Persona } from './seed';
import { compareSnowflakes, SnowflakeMint, snowflakeTime } from './snowflake';

/** Gateway intent bits this stand-in filters on. */
export const Intents = {
  Guilds: 1 << 0,
  GuildMembers: 1 << 1,
  GuildPresences: 1 << 8,
  GuildMessages: 1 << 9,
  GuildMessageReactions: 1 << 10,
  GuildMessageTyping: 1 << 11,
  MessageContent: 1 << 15,
} as const;

export const PRIVILEGED_INTENTS = Intents.GuildMembers | Intents.GuildPresences | Intents.MessageContent;

const MESSAGE_TYPE = { default: 0, reply: 19 } as const;
const CHANNEL_TYPE = { guildText: 0, publicThread: 11 } as const;
const MESSAGE_FLAG_HAS_THREAD = 1 << 5;

// What a bot with a sensible invite gets: view, send, react, history, embed, attach, threads.
const BOT_PERMISSIONS = [10n, 11n, 6n, 16n, 14n, 15n, 34n, 35n, 38n]
  .reduce((acc, bit) => acc | (1n << bit), 0n)
  .toString();
// @everyone: view, send, react, history, create public threads, send in threads.
const EVERYONE_PERMISSIONS = [10n, 11n, 6n, 16n, 35n, 38n]
  .reduce((acc, bit) => acc | (1n << bit), 0n)
  .toString();

export type Json = Record<string, unknown>;

export interface UserRecord {
  id: string;
  username: string;
  globalName: string | null;
  persona: Persona | 'bot';
  bot: boolean;
  roleIds: string[];
  joinedAt: string;
}

export interface RoleRecord {
  id: string;
  name: string;
  color: number;
  position: number;
  permissions: string;
  managed: boolean;
}

export interface ChannelRecord {
  id: string;
  name: string;
  topic: string | null;
  position: number;
  mode: ChannelMode | null;
  lastMessageId: string | null;
  /** Keyed by role or member id, in the order they were set. */
  overwrites: Map<string, PermissionOverwrite>;
}

export interface ThreadRecord {
  id: string;
  parentId: string;
  name: string;
  ownerId: string;
  createdAt: string;
  autoArchiveDuration: number;
  archived: boolean;
  locked: boolean;
  lastMessageId: string | null;
  messageCount: number;
  totalMessageSent: number;
  memberIds: Set<string>;
}

export interface AttachmentRecord {
  id: string;
  filename: string;
  size: number;
  contentType: string | null;
  url: string;
}

export interface WebhookAuthor {
  id: string;
  username: string;
}

export interface MessageRecord {
  id: string;
  channelId: string;
  authorId: string;
  webhook: WebhookAuthor | null;
  content: string;
  nonce: string | number | null;
  type: number;
  mentionIds: string[];
  mentionRoleIds: string[];
  mentionEveryone: boolean;
  attachments: AttachmentRecord[];
  embeds: Json[];
  components: Json[];
  referenceId: string | null;
  threadId: string | null;
  flags: number;
  tts: boolean;
  editedAt: string | null;
}

export interface ReactionRecord {
  emoji: { id: string | null; name: string };
  userIds: string[];
}

/** One gateway dispatch: the event name, its payload, and the intent a session needs to receive it. */
export interface WorldEvent {
  t: string;
  d: Json;
  intent: number | null;
  /** Present for message events: gateway sessions without MESSAGE_CONTENT get it redacted. */
  message?: MessageRecord;
}

export interface PostMessageInput {
  channelId: string;
  authorId: string;
  content?: string;
  nonce?: string | number | null;
  enforceNonce?: boolean;
  tts?: boolean;
  embeds?: Json[];
  components?: Json[];
  stickerIds?: string[];
  attachments?: Omit<AttachmentRecord, 'id' | 'url'>[];
  allowedMentions?: unknown;
  messageReference?: { message_id?: unknown; channel_id?: unknown; fail_if_not_exists?: unknown } | null;
  webhook?: WebhookAuthor;
}

export interface WorldOptions {
  seed: ParsedSeed;
  mint: SnowflakeMint;
  dedupeWindowMs: number;
  messageContentIntent: boolean;
  now: () => number;
  attachmentUrl: (channelId: string, attachmentId: string, filename: string) => string;
}

/**
 * The guild's state and every mutation Discord would perform on it. Mutations validate like the real
 * API (throwing DiscordApiError with Discord's codes) and report what happened as gateway events;
 * transports (REST, gateway, control API) only translate.
 */
export class DiscordWorld {
  readonly guildId: string;
  readonly guildName: string;
  readonly applicationId: string;
  readonly botId: string;
  readonly ownerId: string;
  readonly createdAt: string;
  readonly users = new Map<string, UserRecord>();
  readonly roles = new Map<string, RoleRecord>();
  readonly channels = new Map<string, ChannelRecord>();
  readonly threads = new Map<string, ThreadRecord>();
  private readonly messagesByChannel = new Map<string, MessageRecord[]>();
  private readonly messagesById = new Map<string, MessageRecord>();
  private readonly reactionsByMessage = new Map<string, Map<string, ReactionRecord>>();
  private readonly nonces = new Map<string, { messageId: string; at: number }>();
  private readonly listeners = new Set<(event: WorldEvent) => void>();

  constructor(private readonly options: WorldOptions) {
    const { seed, mint } = options;
    this.createdAt = new Date(options.now()).toISOString();
    this.guildId = seed.guild.id ?? mint.next();
    this.guildName = seed.guild.name;
    this.botId = seed.bot.id ?? mint.next();
    this.applicationId = seed.bot.applicationId ?? this.botId;

    this.roles.set(this.guildId, {
      id: this.guildId,
      name: '@everyone',
      color: 0,
      position: 0,
      permissions: EVERYONE_PERMISSIONS,
      managed: false,
    });
    seed.roles.forEach((role, i) => {
      const roleId = role.id ?? mint.next();
      this.roles.set(roleId, {
        id: roleId,
        name: role.name,
        color: role.color,
        position: i + 1,
        permissions: EVERYONE_PERMISSIONS,
        managed: false,
      });
    });
    const botRoleId = seed.bot.roleId ?? mint.next();
    this.roles.set(botRoleId, {
      id: botRoleId,
      name: seed.bot.username,
      color: 0,
      position: seed.roles.length + 1,
      permissions: BOT_PERMISSIONS,
      managed: true,
    });

    const roleIdByName = new Map([...this.roles.values()].map((r) => [r.name, r.id]));
    for (const user of seed.users) {
      const userId = user.id ?? mint.next();
      const roleIds = user.roles.map((name) => {
        const roleId = roleIdByName.get(name);
        if (!roleId) throw new Error(`seed: user ${user.username} lists unknown role ${name}`);
        return roleId;
      });
      this.users.set(userId, {
        id: userId,
        username: user.username,
        globalName: user.globalName ?? null,
        persona: user.persona,
        bot: user.bot,
        roleIds,
        joinedAt: this.createdAt,
      });
    }
    this.users.set(this.botId, {
      id: this.botId,
      username: seed.bot.username,
      globalName: null,
      persona: 'bot',
      bot: true,
      roleIds: [botRoleId],
      joinedAt: this.createdAt,
    });
    const firstHuman = [...this.users.values()].find((u) => !u.bot);
    this.ownerId = firstHuman?.id ?? this.botId;

    seed.channels.forEach((channel, i) => {
      const channelId = channel.id ?? mint.next();
      this.channels.set(channelId, {
        id: channelId,
        name: channel.name,
        topic: channel.topic ?? null,
        position: i,
        mode: channel.mode ?? null,
        lastMessageId: null,
        overwrites: new Map(),
      });
      this.messagesByChannel.set(channelId, []);
    });
  }

  get messageContentIntent(): boolean {
    return this.options.messageContentIntent;
  }

  subscribe(listener: (event: WorldEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: WorldEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  // ---------------------------------------------------------------- lookups

  user(userId: string): UserRecord {
    const user = this.users.get(userId);
    if (!user) throw new DiscordApiError('unknownUser');
    return user;
  }

  member(userId: string): UserRecord {
    const user = this.users.get(userId);
    if (!user) throw new DiscordApiError('unknownMember');
    return user;
  }

  /** A channel or thread messages can be posted in. */
  messageable(
    channelId: string,
  ): { kind: 'channel'; channel: ChannelRecord } | { kind: 'thread'; thread: ThreadRecord } {
    const channel = this.channels.get(channelId);
    if (channel) return { kind: 'channel', channel };
    const thread = this.threads.get(channelId);
    if (thread) return { kind: 'thread', thread };
    throw new DiscordApiError('unknownChannel');
  }

  message(channelId: string, messageId: string): MessageRecord {
    this.messageable(channelId);
    const message = this.messagesById.get(messageId);
    if (!message || message.channelId !== channelId) throw new DiscordApiError('unknownMessage');
    return message;
  }

  findMessage(messageId: string): MessageRecord | undefined {
    return this.messagesById.get(messageId);
  }

  /** Oldest first. */
  messagesIn(channelId: string): MessageRecord[] {
    this.messageable(channelId);
    return [...(this.messagesByChannel.get(channelId) ?? [])];
  }

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

  /** Discord lists active threads newest first (by id, descending). */
  activeThreads(): ThreadRecord[] {
    return [...this.threads.values()]
      .filter((t) => !t.archived)
      .sort((a, b) => compareSnowflakes(b.id, a.id));
  }

  // ---------------------------------------------------------------- mutations

  postMessage(input: PostMessageInput): { message: MessageRecord; created: boolean } {
    const target = this.messageable(input.channelId);
    const author = this.user(input.webhook ? this.botId : input.authorId);
    // Discord stores content without leading or trailing whitespace.
    const content = (input.content ?? '').trim();

    if (input.nonce !== undefined && input.nonce !== null && String(input.nonce).length > 25) {
      throw invalidForm(['nonce'], 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
    }
    if (content.length > 2000)
      throw invalidForm(['content'], 'BASE_TYPE_MAX_LENGTH', 'Must be 2000 or fewer in length.');
    const hasBody =
      content.length > 0 ||
      (input.embeds?.length ?? 0) > 0 ||
      (input.components?.length ?? 0) > 0 ||
      (input.stickerIds?.length ?? 0) > 0 ||
      (input.attachments?.length ?? 0) > 0;
    if (!hasBody) throw new DiscordApiError('emptyMessage');
    if (target.kind === 'thread' && target.thread.locked) throw new DiscordApiError('threadArchived');

    const authorKey = input.webhook ? `webhook:${input.webhook.id}` : author.id;
    const nonceKey =
      input.nonce !== undefined && input.nonce !== null
        ? `${authorKey}:${input.channelId}:${String(input.nonce)}`
        : null;
    if (nonceKey && input.enforceNonce) {
      const seen = this.nonces.get(nonceKey);
      if (seen && this.options.now() - seen.at <= this.options.dedupeWindowMs) {
        const existing = this.messagesById.get(seen.messageId);
        if (existing) return { message: existing, created: false };
        // Discord remembers the nonce, not the message: the first one was deleted, nothing is posted.
        throw new DiscordApiError('unknownMessage');
      }
    }
    const embeds = normaliseEmbeds(input.embeds);
    const components = normaliseMessageComponents(input.components);

    const mentions = parseAllowedMentions(input.allowedMentions);
    let referenceId: string | null = null;
    if (input.messageReference && input.messageReference.message_id !== undefined) {
      const refId = String(input.messageReference.message_id);
      const refChannel =
        input.messageReference.channel_id !== undefined
          ? String(input.messageReference.channel_id)
          : input.channelId;
      const referenced = this.messagesById.get(refId);
      if (!referenced || referenced.channelId !== refChannel) {
        if (input.messageReference.fail_if_not_exists !== false) {
          throw invalidForm(['message_reference'], 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', 'Unknown message');
        }
      } else {
        referenceId = referenced.id;
      }
    }

    const id = this.options.mint.next();
    const mentionIds = [
      ...new Set([...content.matchAll(/<@!?(\d{17,20})>/g)].map((m) => m[1] as string)),
    ].filter((userId) => this.users.has(userId) && mentions.allowsUser(userId, author.bot));
    const mentionRoleIds = [
      ...new Set([...content.matchAll(/<@&(\d{17,20})>/g)].map((m) => m[1] as string)),
    ].filter((roleId) => this.roles.has(roleId) && mentions.allowsRole(roleId, author.bot));
    const message: MessageRecord = {
      id,
      channelId: input.channelId,
      authorId: input.webhook ? input.webhook.id : author.id,
      webhook: input.webhook ?? null,
      content,
      nonce: input.nonce ?? null,
      type: referenceId ? MESSAGE_TYPE.reply : MESSAGE_TYPE.default,
      mentionIds,
      mentionRoleIds,
      mentionEveryone: /@(everyone|here)/.test(content) && mentions.allowsEveryone(author.bot),
      attachments: (input.attachments ?? []).map((a) => {
        const attachmentId = this.options.mint.next();
        return {
          ...a,
          id: attachmentId,
          url: this.options.attachmentUrl(input.channelId, attachmentId, a.filename),
        };
      }),
      embeds,
      components,
      referenceId,
      threadId: null,
      flags: 0,
      tts: input.tts ?? false,
      editedAt: null,
    };
    this.messagesByChannel.get(input.channelId)?.push(message) ??
      this.messagesByChannel.set(input.channelId, [message]);
    this.messagesById.set(id, message);
    if (nonceKey) this.nonces.set(nonceKey, { messageId: id, at: this.options.now() });
    if (target.kind === 'channel') target.channel.lastMessageId = id;
    else {
      // Sending into an archived (unlocked) thread unarchives it, as on Discord.
      if (target.thread.archived) this.setThreadArchived(target.thread.id, false);
      target.thread.lastMessageId = id;
      target.thread.messageCount += 1;
      target.thread.totalMessageSent += 1;
      if (!input.webhook) target.thread.memberIds.add(author.id);
    }
    this.emit({
      t: 'MESSAGE_CREATE',
      d: this.renderMessage(message, { gateway: true, nonce: true }),
      intent: Intents.GuildMessages,
      message,
    });
    return { message, created: true };
  }

  /**
   * PATCH of a message: each field given replaces the stored one (`content`, `embeds`,
   * `components`, and `attachments` as the list of kept attachment ids); fields left out stay.
   */
  editMessage(
    channelId: string,
    messageId: string,
    content: unknown,
    actorId: string,
    more: { embeds?: unknown; components?: unknown; keepAttachmentIds?: string[] } = {},
  ): MessageRecord {
    const message = this.message(channelId, messageId);
    if (message.authorId !== actorId || message.webhook) throw new DiscordApiError('cannotEditOthers');
    if (content !== undefined && content !== null && typeof content !== 'string')
      throw invalidForm(['content'], 'BASE_TYPE_BAD_TYPE', 'Must be a string.');
    const nextContent = typeof content === 'string' ? content : content === null ? '' : message.content;
    if (nextContent.length > 2000)
      throw invalidForm(['content'], 'BASE_TYPE_MAX_LENGTH', 'Must be 2000 or fewer in length.');
    const embeds = more.embeds !== undefined ? normaliseEmbeds(more.embeds) : message.embeds;
    const components =
      more.components !== undefined ? normaliseMessageComponents(more.components) : message.components;
    const attachments = more.keepAttachmentIds
      ? message.attachments.filter((a) => more.keepAttachmentIds?.includes(a.id))
      : message.attachments;
    if (
      nextContent.length === 0 &&
      attachments.length === 0 &&
      embeds.length === 0 &&
      components.length === 0
    )
      throw new DiscordApiError('emptyMessage');
    const target = this.messageable(channelId);
    if (target.kind === 'thread' && target.thread.archived) {
      if (target.thread.locked) throw new DiscordApiError('threadArchived');
      this.setThreadArchived(target.thread.id, false);
    }
    message.content = nextContent;
    message.embeds = embeds;
    message.components = components;
    message.attachments = attachments;
    message.editedAt = new Date(this.options.now()).toISOString();
    this.emit({
      t: 'MESSAGE_UPDATE',
      d: this.renderMessage(message, { gateway: true }),
      intent: Intents.GuildMessages,
      message,
    });
    return message;
  }

  deleteMessage(channelId: string, messageId: string, actorId: string): void {
    const message = this.message(channelId, messageId);
    if (message.authorId !== actorId) throw new DiscordApiError('missingPermissions');
    const list = this.messagesByChannel.get(channelId) ?? [];
    list.splice(list.indexOf(message), 1);
    this.messagesById.delete(messageId);
    this.reactionsByMessage.delete(messageId);
    this.emit({
      t: 'MESSAGE_DELETE',
      d: { id: messageId, channel_id: channelId, guild_id: this.guildId },
      intent: Intents.GuildMessages,
    });
  }

  setThreadArchived(threadId: string, archived: boolean): ThreadRecord {
    const thread = this.threads.get(threadId);
    if (!thread) throw new DiscordApiError('unknownChannel');
    if (thread.archived === archived) return thread;
    thread.archived = archived;
    this.emit({ t: 'THREAD_UPDATE', d: this.renderThread(thread), intent: Intents.Guilds });
    return thread;
  }

  /** A moderator locked (or unlocked) the thread: nobody without Manage Threads may post or unarchive it. */
  setThreadLocked(threadId: string, locked: boolean): ThreadRecord {
    const thread = this.threads.get(threadId);
    if (!thread) throw new DiscordApiError('unknownChannel');
    if (thread.locked === locked) return thread;
    thread.locked = locked;
    this.emit({ t: 'THREAD_UPDATE', d: this.renderThread(thread), intent: Intents.Guilds });
    return thread;
  }

  addReaction(channelId: string, messageId: string, rawEmoji: string, userId: string): boolean {
    const message = this.message(channelId, messageId);
    const emoji = parseEmoji(rawEmoji);
    const byEmoji = this.reactionsByMessage.get(message.id) ?? new Map<string, ReactionRecord>();
    this.reactionsByMessage.set(message.id, byEmoji);
    const key = emoji.id ?? emoji.name;
    const reaction = byEmoji.get(key) ?? { emoji, userIds: [] };
    byEmoji.set(key, reaction);
    if (reaction.userIds.includes(userId)) return false;
    reaction.userIds.push(userId);
    this.emit({
      t: 'MESSAGE_REACTION_ADD',
      d: {
        user_id: userId,
        channel_id: channelId,
        message_id: messageId,
        guild_id: this.guildId,
        member: this.renderMember(this.member(userId)),
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
    const message = this.message(channelId, messageId);
    const emoji = parseEmoji(rawEmoji);
    const byEmoji = this.reactionsByMessage.get(message.id);
    const key = emoji.id ?? emoji.name;
    const reaction = byEmoji?.get(key);
    if (!reaction || !reaction.userIds.includes(userId)) return false;
    reaction.userIds = reaction.userIds.filter((u) => u !== userId);
    if (reaction.userIds.length === 0) byEmoji?.delete(key);
    this.emit({
      t: 'MESSAGE_REACTION_REMOVE',
      d: {
        user_id: userId,
        channel_id: channelId,
        message_id: messageId,
        guild_id: this.guildId,
        emoji: { id: emoji.id, name: emoji.name },
        burst: false,
        type: 0,
      },
      intent: Intents.GuildMessageReactions,
    });
    return true;
  }

  startThreadFromMessage(
    channelId: string,
    messageId: string,
    name: unknown,
    ownerId: string,
    autoArchiveDuration: unknown,
  ): ThreadRecord {
    const target = this.messageable(channelId);
    if (target.kind !== 'channel') throw new DiscordApiError('wrongChannelType');
    const message = this.message(channelId, messageId);
    const { threadName, duration } = validateThread(name, autoArchiveDuration);
    if (message.threadId || this.threads.has(message.id)) throw new DiscordApiError('threadAlreadyCreated');
    const thread = this.openThread(message.id, channelId, threadName, ownerId, duration);
    message.threadId = thread.id;
    message.flags |= MESSAGE_FLAG_HAS_THREAD;
    this.emit({
      t: 'MESSAGE_UPDATE',
      d: this.renderMessage(message, { gateway: true }),
      intent: Intents.GuildMessages,
      message,
    });
    return thread;
  }

  /** A public thread without a starter message (`POST /channels/{id}/threads`): it gets a fresh id. */
  startThread(channelId: string, name: unknown, ownerId: string, autoArchiveDuration: unknown): ThreadRecord {
    const target = this.messageable(channelId);
    if (target.kind !== 'channel') throw new DiscordApiError('wrongChannelType');
    const { threadName, duration } = validateThread(name, autoArchiveDuration);
    return this.openThread(this.options.mint.next(), channelId, threadName, ownerId, duration);
  }

  private openThread(
    id: string,
    parentId: string,
    name: string,
    ownerId: string,
    duration: number,
  ): ThreadRecord {
    const thread: ThreadRecord = {
      id,
      parentId,
      name,
      ownerId,
      createdAt: new Date(this.options.now()).toISOString(),
      autoArchiveDuration: duration,
      archived: false,
      locked: false,
      lastMessageId: null,
      messageCount: 0,
      totalMessageSent: 0,
      memberIds: new Set([ownerId]),
    };
    this.threads.set(thread.id, thread);
    this.messagesByChannel.set(thread.id, []);
    this.emit({
      t: 'THREAD_CREATE',
      d: { ...this.renderThread(thread, ownerId), newly_created: true },
      intent: Intents.Guilds,
    });
    return thread;
  }

  typing(channelId: string, userId: string): void {
    this.messageable(channelId);
    this.emit({
      t: 'TYPING_START',
      d: {
        channel_id: channelId,
        guild_id: this.guildId,
        user_id: userId,
        timestamp: Math.floor(this.options.now() / 1000),
        member: this.renderMember(this.member(userId)),
      },
      intent: Intents.GuildMessageTyping,
    });
  }

  setMemberRoles(userId: string, roleIds: string[]): UserRecord {
    const member = this.member(userId);
    for (const roleId of roleIds)
      if (!this.roles.has(roleId)) throw invalidForm(['roles'], 'UNKNOWN_ROLE', `Unknown role ${roleId}`);
    member.roleIds = [...roleIds];
    this.emit({
      t: 'GUILD_MEMBER_UPDATE',
      d: { guild_id: this.guildId, ...this.renderMember(member, true) },
      intent: Intents.GuildMembers,
    });
    return member;
  }

  // ---------------------------------------------------------------- permissions

  /**
   * What `userId` may do in a channel or thread, as Discord computes it: guild roles, then the
   * channel's overwrites (a thread uses its parent's), then the implicit rules (no VIEW_CHANNEL, no
   * send right → no files, embeds, mentions of everyone).
   */
  permissionsIn(userId: string, channelId: string): bigint {
    const target = this.messageable(channelId);
    const channel = target.kind === 'channel' ? target.channel : this.channels.get(target.thread.parentId);
    const member = this.member(userId);
    const raw = computePermissions(
      {
        guildId: this.guildId,
        ownerId: this.ownerId,
        rolePermissions: (roleId) => {
          const role = this.roles.get(roleId);
          return role ? BigInt(role.permissions) : undefined;
        },
      },
      member,
      channel?.overwrites ?? new Map(),
    );
    return usablePermissions(raw, target.kind);
  }

  /**
   * Discord's answer when `userId` lacks a permission the action needs: 50001 Missing Access
   * without VIEW_CHANNEL, 50013 Missing Permissions for anything else.
   */
  requirePermissions(userId: string, channelId: string, needs: bigint): void {
    const has = this.permissionsIn(userId, channelId);
    if ((has & Permission.VIEW_CHANNEL) === 0n) throw new DiscordApiError('missingAccess');
    if ((has & needs) !== needs) throw new DiscordApiError('missingPermissions');
  }

  /** `PUT /channels/{id}/permissions/{overwrite_id}`: threads have none (50024); the target must exist. */
  setPermissionOverwrite(channelId: string, overwrite: PermissionOverwrite): ChannelRecord {
    const channel = this.overwritableChannel(channelId);
    if (overwrite.type === OverwriteType.role && !this.roles.has(overwrite.id))
      throw new DiscordApiError('unknownRole');
    if (overwrite.type === OverwriteType.member) this.member(overwrite.id);
    channel.overwrites.set(overwrite.id, { ...overwrite });
    this.emitChannelUpdate(channel);
    return channel;
  }

  deletePermissionOverwrite(channelId: string, overwriteId: string): ChannelRecord {
    const channel = this.overwritableChannel(channelId);
    if (channel.overwrites.delete(overwriteId)) this.emitChannelUpdate(channel);
    return channel;
  }

  /** A guild role's base permissions changed (server settings): GUILD_ROLE_UPDATE. */
  setRolePermissions(roleId: string, permissions: bigint): RoleRecord {
    const role = this.roles.get(roleId);
    if (!role) throw new DiscordApiError('unknownRole');
    role.permissions = permissions.toString();
    this.emit({
      t: 'GUILD_ROLE_UPDATE',
      d: { guild_id: this.guildId, role: this.renderRole(role) },
      intent: Intents.Guilds,
    });
    return role;
  }

  private overwritableChannel(channelId: string): ChannelRecord {
    const target = this.messageable(channelId);
    if (target.kind !== 'channel') throw new DiscordApiError('wrongChannelType');
    return target.channel;
  }

  private emitChannelUpdate(channel: ChannelRecord): void {
    this.emit({ t: 'CHANNEL_UPDATE', d: this.renderChannel(channel), intent: Intents.Guilds });
  }

  /** For hooks that need to dispatch something the world does not model (interactions). */
  dispatch(event: WorldEvent): void {
    this.emit(event);
  }

  // ---------------------------------------------------------------- API shapes

  renderUser(user: UserRecord): Json {
    return {
      id: user.id,
      username: user.username,
      global_name: user.globalName,
      discriminator: '0',
      avatar: null,
      ...(user.bot ? { bot: true } : {}),
      public_flags: 0,
      flags: 0,
      banner: null,
      accent_color: null,
      avatar_decoration_data: null,
      primary_guild: null,
    };
  }

  renderMember(user: UserRecord, withUser = false): Json {
    return {
      ...(withUser ? { user: this.renderUser(user) } : {}),
      nick: null,
      avatar: null,
      banner: null,
      roles: [...user.roleIds],
      joined_at: user.joinedAt,
      premium_since: null,
      deaf: false,
      mute: false,
      flags: 0,
      pending: false,
      communication_disabled_until: null,
    };
  }

  renderRole(role: RoleRecord): Json {
    return {
      id: role.id,
      name: role.name,
      description: null,
      color: role.color,
      colors: { primary_color: role.color, secondary_color: null, tertiary_color: null },
      hoist: false,
      icon: null,
      unicode_emoji: null,
      position: role.position,
      permissions: role.permissions,
      managed: role.managed,
      mentionable: false,
      flags: 0,
      ...(role.managed ? { tags: { bot_id: this.botId } } : {}),
    };
  }

  renderChannel(channel: ChannelRecord): Json {
    return {
      id: channel.id,
      type: CHANNEL_TYPE.guildText,
      guild_id: this.guildId,
      name: channel.name,
      position: channel.position,
      permission_overwrites: [...channel.overwrites.values()].map(renderOverwrite),
      topic: channel.topic,
      nsfw: false,
      last_message_id: channel.lastMessageId,
      rate_limit_per_user: 0,
      parent_id: null,
      default_auto_archive_duration: 4320,
      flags: 0,
    };
  }

  renderThread(thread: ThreadRecord, viewerId: string | null = null): Json {
    const rendered: Json = {
      id: thread.id,
      type: CHANNEL_TYPE.publicThread,
      guild_id: this.guildId,
      parent_id: thread.parentId,
      owner_id: thread.ownerId,
      name: thread.name,
      last_message_id: thread.lastMessageId,
      message_count: thread.messageCount,
      member_count: thread.memberIds.size,
      total_message_sent: thread.totalMessageSent,
      rate_limit_per_user: 0,
      flags: 0,
      applied_tags: [],
      thread_metadata: {
        archived: thread.archived,
        auto_archive_duration: thread.autoArchiveDuration,
        archive_timestamp: thread.createdAt,
        locked: thread.locked,
        create_timestamp: thread.createdAt,
      },
    };
    if (viewerId && thread.memberIds.has(viewerId)) {
      rendered.member = { id: thread.id, user_id: viewerId, join_timestamp: thread.createdAt, flags: 0 };
    }
    return rendered;
  }

  renderGuild(): Json {
    const firstChannel = [...this.channels.values()][0];
    return {
      id: this.guildId,
      name: this.guildName,
      icon: null,
      icon_hash: null,
      splash: null,
      discovery_splash: null,
      owner_id: this.ownerId,
      afk_channel_id: null,
      afk_timeout: 300,
      widget_enabled: false,
      widget_channel_id: null,
      verification_level: 0,
      default_message_notifications: 1,
      explicit_content_filter: 0,
      roles: [...this.roles.values()].map((r) => this.renderRole(r)),
      emojis: [],
      stickers: [],
      features: [],
      mfa_level: 0,
      application_id: null,
      system_channel_id: firstChannel?.id ?? null,
      system_channel_flags: 0,
      rules_channel_id: null,
      max_presences: null,
      max_members: 500000,
      vanity_url_code: null,
      description: null,
      banner: null,
      premium_tier: 0,
      premium_subscription_count: 0,
      preferred_locale: 'en-US',
      public_updates_channel_id: null,
      max_video_channel_users: 25,
      max_stage_video_channel_users: 50,
      nsfw_level: 0,
      premium_progress_bar_enabled: false,
      safety_alerts_channel_id: null,
      incidents_data: null,
      home_header: null,
      region: 'deprecated',
      nsfw: false,
      hub_type: null,
      latest_onboarding_question_id: null,
    };
  }

  /** GUILD_CREATE: the guild plus everything a client caches at start. */
  renderGuildCreate(): Json {
    return {
      ...this.renderGuild(),
      joined_at: this.createdAt,
      large: false,
      unavailable: false,
      member_count: this.users.size,
      voice_states: [],
      members: [...this.users.values()].map((u) => this.renderMember(u, true)),
      channels: [...this.channels.values()].map((c) => this.renderChannel(c)),
      threads: this.activeThreads().map((t) => this.renderThread(t, this.botId)),
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
      embedded_activities: [],
    };
  }

  /**
   * A message as the API shows it. `nonce` only where Discord sends it: the answer to the POST that
   * created the message and its MESSAGE_CREATE dispatch; a re-fetched message has none.
   */
  renderMessage(
    message: MessageRecord,
    { gateway = false, nonce = false }: { gateway?: boolean; nonce?: boolean } = {},
  ): Json {
    const author = message.webhook
      ? {
          id: message.webhook.id,
          username: message.webhook.username,
          global_name: null,
          discriminator: '0000',
          avatar: null,
          bot: true,
          public_flags: 0,
          flags: 0,
        }
      : this.renderUser(this.user(message.authorId));
    const referenced = message.referenceId ? this.messagesById.get(message.referenceId) : undefined;
    const thread = message.threadId ? this.threads.get(message.threadId) : undefined;
    const reactions = this.reactionsOn(message.id);
    const rendered: Json = {
      id: message.id,
      type: message.type,
      channel_id: message.channelId,
      author,
      content: message.content,
      timestamp: snowflakeTime(message.id).toISOString(),
      edited_timestamp: message.editedAt,
      tts: message.tts,
      mention_everyone: message.mentionEveryone,
      mentions: message.mentionIds.map((userId) => {
        const user = this.user(userId);
        return gateway
          ? { ...this.renderUser(user), member: this.renderMember(user) }
          : this.renderUser(user);
      }),
      mention_roles: [...message.mentionRoleIds],
      attachments: message.attachments.map((a) => ({
        id: a.id,
        filename: a.filename,
        size: a.size,
        url: a.url,
        proxy_url: a.url,
        ...(a.contentType ? { content_type: a.contentType } : {}),
      })),
      embeds: message.embeds,
      components: message.components,
      pinned: false,
      flags: message.flags,
      ...(nonce && message.nonce !== null ? { nonce: message.nonce } : {}),
      ...(message.webhook ? { webhook_id: message.webhook.id } : {}),
      ...(message.referenceId
        ? {
            message_reference: {
              type: 0,
              message_id: message.referenceId,
              channel_id: message.channelId,
              guild_id: this.guildId,
            },
          }
        : {}),
      ...(message.type === MESSAGE_TYPE.reply
        ? { referenced_message: referenced ? this.renderMessage(referenced) : null }
        : {}),
      ...(thread ? { thread: this.renderThread(thread) } : {}),
      ...(reactions.length > 0 && !gateway
        ? {
            reactions: reactions.map((r) => ({
              emoji: r.emoji,
              count: r.userIds.length,
              count_details: { burst: 0, normal: r.userIds.length },
              me: r.userIds.includes(this.botId),
              me_burst: false,
              burst_colors: [],
            })),
          }
        : {}),
    };
    if (gateway) {
      rendered.guild_id = this.guildId;
      if (!message.webhook) rendered.member = this.renderMember(this.user(message.authorId));
    }
    return rendered;
  }

  /**
   * What a reader without the message-content privilege sees: Discord blanks content, embeds,
   * attachments and components unless the message mentions the bot or is the bot's own.
   */
  redactForContent(message: MessageRecord, rendered: Json): Json {
    if (message.authorId === this.botId || message.mentionIds.includes(this.botId)) return rendered;
    return { ...rendered, content: '', embeds: [], attachments: [], components: [] };
  }
}

function validateThread(
  name: unknown,
  autoArchiveDuration: unknown,
): { threadName: string; duration: number } {
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 100) {
    throw invalidForm(['name'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
  }
  const duration = typeof autoArchiveDuration === 'number' ? autoArchiveDuration : 4320;
  if (![60, 1440, 4320, 10080].includes(duration)) {
    throw invalidForm(
      ['auto_archive_duration'],
      'BASE_TYPE_CHOICES',
      'Value must be one of {60, 1440, 4320, 10080}.',
    );
  }
  return { threadName: name, duration };
}

interface MentionPolicy {
  allowsUser(userId: string, authorIsBot: boolean): boolean;
  allowsRole(roleId: string, authorIsBot: boolean): boolean;
  allowsEveryone(authorIsBot: boolean): boolean;
}

function parseAllowedMentions(raw: unknown): MentionPolicy {
  if (raw === undefined || raw === null) {
    return { allowsUser: () => true, allowsRole: () => true, allowsEveryone: () => true };
  }
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw invalidForm(
      ['allowed_mentions'],
      'MODEL_TYPE_CONVERT',
      'Only dictionaries may be used in a ModelType',
    );
  const am = raw as { parse?: unknown; users?: unknown; roles?: unknown; replied_user?: unknown };
  const parse = am.parse ?? [];
  if (!Array.isArray(parse) || parse.some((p) => p !== 'users' && p !== 'roles' && p !== 'everyone')) {
    throw invalidForm(
      ['allowed_mentions', 'parse'],
      'BASE_TYPE_CHOICES',
      'Value must be one of {"roles", "users", "everyone"}.',
    );
  }
  const users = am.users ?? [];
  const roles = am.roles ?? [];
  if (!Array.isArray(users) || !Array.isArray(roles))
    throw invalidForm(['allowed_mentions'], 'BASE_TYPE_BAD_TYPE', 'Must be an array.');
  if (parse.includes('users') && users.length > 0) {
    throw invalidForm(
      ['allowed_mentions'],
      'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
      'parse:["users"] and users: [ids...] are mutually exclusive.',
    );
  }
  if (parse.includes('roles') && roles.length > 0) {
    throw invalidForm(
      ['allowed_mentions'],
      'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
      'parse:["roles"] and roles: [ids...] are mutually exclusive.',
    );
  }
  if (users.length > 100 || roles.length > 100)
    throw invalidForm(['allowed_mentions'], 'BASE_TYPE_MAX_LENGTH', 'Must be 100 or fewer in length.');
  const userSet = new Set(users.map(String));
  const roleSet = new Set(roles.map(String));
  return {
    allowsUser: (userId) => parse.includes('users') || userSet.has(userId),
    allowsRole: (roleId) => parse.includes('roles') || roleSet.has(roleId),
    allowsEveryone: () => parse.includes('everyone'),
  };
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
