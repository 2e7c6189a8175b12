import type { PermissionOverwrite } from './permissions';
import type { WorldContext } from './world-context';
import { WorldGuild } from './world-guild';
import { WorldMembers } from './world-members';
import { MessageStore } from './world-message-store';
import { WorldMessages } from './world-messages';
import { WorldReactions } from './world-reactions';
import { WorldRenderer } from './world-render';
import { WorldThreads } from './world-threads';
import type {
  ChannelRecord,
  Json,
  MessageRecord,
  PostMessageInput,
  ReactionRecord,
  RoleRecord,
  ThreadRecord,
  UserRecord,
  WorldEvent,
  WorldOptions,
} from './world-types';

export { Intents, PRIVILEGED_INTENTS } from './world-types';
export type {
  AttachmentRecord,
  ChannelRecord,
  Json,
  MessageRecord,
  PostMessageInput,
  ReactionRecord,
  RoleRecord,
  ThreadRecord,
  UserRecord,
  WebhookAuthor,
  WorldEvent,
  WorldOptions,
} from './world-types';
export { parseEmoji } from './world-reactions';

/**
 * The guild's state and every mutation Discord would perform on it. Mutations validate like the real
 * API (throwing DiscordApiError with Discord's codes) and report what happened as gateway events;
 * transports (REST, gateway, control API) only translate.
 *
 * What it holds lives beside it: the guild, its members, roles, channels and threads
 * (`world-guild`), the messages and reactions (`world-message-store`), and the operations on them
 * (`world-messages`, `world-reactions`, `world-threads`, `world-members`); `world-render` gives
 * everything the API's shapes.
 */
export class DiscordWorld {
  readonly guildId: string;
  readonly guildName: string;
  readonly applicationId: string;
  readonly botId: string;
  readonly ownerId: string;
  readonly createdAt: string;
  readonly users: Map<string, UserRecord>;
  readonly roles: Map<string, RoleRecord>;
  readonly channels: Map<string, ChannelRecord>;
  readonly threads: Map<string, ThreadRecord>;
  private readonly guild: WorldGuild;
  private readonly store: MessageStore;
  private readonly render: WorldRenderer;
  private readonly threadOps: WorldThreads;
  private readonly messageOps: WorldMessages;
  private readonly reactionOps: WorldReactions;
  private readonly memberOps: WorldMembers;
  private readonly listeners = new Set<(event: WorldEvent) => void>();

  constructor(private readonly options: WorldOptions) {
    const guild = new WorldGuild(options);
    this.guild = guild;
    this.guildId = guild.guildId;
    this.guildName = guild.guildName;
    this.applicationId = guild.applicationId;
    this.botId = guild.botId;
    this.ownerId = guild.ownerId;
    this.createdAt = guild.createdAt;
    this.users = guild.users;
    this.roles = guild.roles;
    this.channels = guild.channels;
    this.threads = guild.threads;
    this.store = new MessageStore(guild);
    this.render = new WorldRenderer(guild, this.store);
    const ctx: WorldContext = {
      options,
      guild,
      store: this.store,
      render: this.render,
      emit: (event) => this.emit(event),
    };
    this.threadOps = new WorldThreads(ctx);
    this.messageOps = new WorldMessages(ctx, this.threadOps);
    this.reactionOps = new WorldReactions(ctx);
    this.memberOps = new WorldMembers(ctx);
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

  /** For hooks that need to dispatch something the world does not model (interactions). */
  dispatch(event: WorldEvent): void {
    this.emit(event);
  }

  // ---------------------------------------------------------------- lookups

  user(userId: string): UserRecord {
    return this.guild.user(userId);
  }

  member(userId: string): UserRecord {
    return this.guild.member(userId);
  }

  /** A channel or thread messages can be posted in. */
  messageable(
    channelId: string,
  ): { kind: 'channel'; channel: ChannelRecord } | { kind: 'thread'; thread: ThreadRecord } {
    return this.guild.messageable(channelId);
  }

  message(channelId: string, messageId: string): MessageRecord {
    return this.store.message(channelId, messageId);
  }

  findMessage(messageId: string): MessageRecord | undefined {
    return this.store.findMessage(messageId);
  }

  /** Oldest first. */
  messagesIn(channelId: string): MessageRecord[] {
    return this.store.messagesIn(channelId);
  }

  reactionsOn(messageId: string): ReactionRecord[] {
    return this.store.reactionsOn(messageId);
  }

  /** Discord's history query: newest → oldest, `limit` 1..100 (default 50). */
  history(
    channelId: string,
    query: { after?: string | null; before?: string | null; around?: string | null; limit?: number },
  ): MessageRecord[] {
    return this.store.history(channelId, query);
  }

  /** Discord lists active threads newest first (by id, descending). */
  activeThreads(): ThreadRecord[] {
    return this.guild.activeThreads();
  }

  // ---------------------------------------------------------------- mutations

  postMessage(input: PostMessageInput): { message: MessageRecord; created: boolean } {
    return this.messageOps.postMessage(input);
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
    return this.messageOps.editMessage(channelId, messageId, content, actorId, more);
  }

  deleteMessage(channelId: string, messageId: string, actorId: string): void {
    this.messageOps.deleteMessage(channelId, messageId, actorId);
  }

  typing(channelId: string, userId: string): void {
    this.messageOps.typing(channelId, userId);
  }

  addReaction(channelId: string, messageId: string, rawEmoji: string, userId: string): boolean {
    return this.reactionOps.addReaction(channelId, messageId, rawEmoji, userId);
  }

  removeReaction(channelId: string, messageId: string, rawEmoji: string, userId: string): boolean {
    return this.reactionOps.removeReaction(channelId, messageId, rawEmoji, userId);
  }

  setThreadArchived(threadId: string, archived: boolean): ThreadRecord {
    return this.threadOps.setThreadArchived(threadId, archived);
  }

  modifyThread(
    threadId: string,
    actorId: string,
    manageThreads: boolean,
    payload: Record<string, unknown>,
  ): ThreadRecord {
    return this.threadOps.modifyThread(threadId, actorId, manageThreads, payload);
  }

  /** Modify Channel for a guild text channel: `name` and `topic` (CHANNEL_UPDATE). */
  updateChannel(channelId: string, payload: Record<string, unknown>): ChannelRecord {
    return this.memberOps.updateChannel(channelId, payload);
  }

  /** A moderator locked (or unlocked) the thread: nobody without Manage Threads may post or unarchive it. */
  setThreadLocked(threadId: string, locked: boolean): ThreadRecord {
    return this.threadOps.setThreadLocked(threadId, locked);
  }

  startThreadFromMessage(
    channelId: string,
    messageId: string,
    name: unknown,
    ownerId: string,
    autoArchiveDuration: unknown,
  ): ThreadRecord {
    return this.threadOps.startThreadFromMessage(channelId, messageId, name, ownerId, autoArchiveDuration);
  }

  /** A thread without a starter message (`POST /channels/{id}/threads`), private unless `type` says 11. */
  startThread(
    channelId: string,
    name: unknown,
    ownerId: string,
    autoArchiveDuration: unknown,
    options: { type?: unknown; invitable?: unknown } = {},
  ): ThreadRecord {
    return this.threadOps.startThread(channelId, name, ownerId, autoArchiveDuration, options);
  }

  setMemberRoles(userId: string, roleIds: string[]): UserRecord {
    return this.memberOps.setMemberRoles(userId, roleIds);
  }

  // ---------------------------------------------------------------- permissions

  /**
   * What `userId` may do in a channel or thread, as Discord computes it: guild roles, then the
   * channel's overwrites (a thread uses its parent's), then the implicit rules.
   */
  permissionsIn(userId: string, channelId: string): bigint {
    return this.memberOps.permissionsIn(userId, channelId);
  }

  /**
   * Discord's answer when `userId` lacks a permission the action needs: 50001 Missing Access
   * without VIEW_CHANNEL, 50013 Missing Permissions for anything else.
   */
  requirePermissions(userId: string, channelId: string, needs: bigint): void {
    this.memberOps.requirePermissions(userId, channelId, needs);
  }

  /** `PUT /channels/{id}/permissions/{overwrite_id}`: threads have none (50024); the target must exist. */
  setPermissionOverwrite(channelId: string, overwrite: PermissionOverwrite): ChannelRecord {
    return this.memberOps.setPermissionOverwrite(channelId, overwrite);
  }

  deletePermissionOverwrite(channelId: string, overwriteId: string): ChannelRecord {
    return this.memberOps.deletePermissionOverwrite(channelId, overwriteId);
  }

  /** A guild role's base permissions changed (server settings): GUILD_ROLE_UPDATE. */
  setRolePermissions(roleId: string, permissions: bigint): RoleRecord {
    return this.memberOps.setRolePermissions(roleId, permissions);
  }

  // ---------------------------------------------------------------- API shapes

  renderUser(user: UserRecord): Json {
    return this.render.renderUser(user);
  }

  renderMember(user: UserRecord, withUser = false): Json {
    return this.render.renderMember(user, withUser);
  }

  renderRole(role: RoleRecord): Json {
    return this.render.renderRole(role);
  }

  renderChannel(channel: ChannelRecord): Json {
    return this.render.renderChannel(channel);
  }

  renderThread(thread: ThreadRecord, viewerId: string | null = null): Json {
    return this.render.renderThread(thread, viewerId);
  }

  renderGuild(): Json {
    return this.render.renderGuild();
  }

  /** GUILD_CREATE: the guild plus everything a client caches at start. */
  renderGuildCreate(): Json {
    return this.render.renderGuildCreate();
  }

  /**
   * A message as the API shows it. `nonce` only where Discord sends it: the answer to the POST that
   * created the message and its MESSAGE_CREATE dispatch; a re-fetched message has none.
   */
  renderMessage(message: MessageRecord, opts: { gateway?: boolean; nonce?: boolean } = {}): Json {
    return this.render.renderMessage(message, opts);
  }

  /**
   * What a reader without the message-content privilege sees: Discord blanks content, embeds,
   * attachments and components unless the message mentions the bot or is the bot's own.
   */
  redactForContent(message: MessageRecord, rendered: Json): Json {
    return this.render.redactForContent(message, rendered);
  }
}
