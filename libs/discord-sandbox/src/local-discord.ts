import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { ApplicationCommands, renderCommand } from './application-commands';
import { ControlApi } from './control';
import { OAuth2Routes } from './oauth2';
import { DiscordApiError } from './errors';
import {
  FaultInjector,
  RateLimiter,
  type FaultRule,
  type InjectedFault,
  type RateLimitSettings,
} from './faults';
import { Gateway, type GatewayOpRecord } from './gateway';
import {
  Interactions,
  type ComponentClickInput,
  type InteractionRecord,
  type ModalSubmitInput,
  type SlashCommandInput,
} from './interactions';
import {
  OverwriteType,
  Permission,
  permissionBits,
  permissionNames,
  type PermissionName,
} from './permissions';
import { RestApi, type RestRequestRecord } from './rest';
import { sandboxPage } from './sandbox-page';
import { localDiscordSeedSchema, type LocalDiscordSeed, type Persona } from './seed';
import { SnowflakeMint, snowflakeTime } from './snowflake';
import { DiscordWorld, type Json, type MessageRecord, type ThreadRecord, type WorldEvent } from './world';
import { Worlds } from './worlds';

export interface LocalDiscordOptions extends LocalDiscordSeed {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** Bot token clients must present (`Authorization: Bot <token>`, IDENTIFY). Defaults to bot.token or a random one. */
  token?: string;
  /** Whether the application has the privileged message-content intent enabled (default true). Without it, IDENTIFY asking for it closes 4014. */
  messageContentIntent?: boolean;
  /** Privileged GUILD_MEMBERS intent enabled (default true). */
  guildMembersIntent?: boolean;
  /** Privileged GUILD_PRESENCES intent enabled (default false). */
  presenceIntent?: boolean;
  /**
   * Whether the bot was invited with the `applications.commands` scope (default true). Without it,
   * every guild-command route answers 403 Missing Access (50001), as Discord does.
   */
  applicationCommandsScope?: boolean;
  /** Bytes of files one message may carry (default 10 MiB, Discord's for a bot); more answers 413 40005. */
  attachmentSizeLimit?: number;
  /** How long `enforce_nonce` dedupes a (author, channel, nonce) triple (default 120 000 ms). */
  dedupeWindowMs?: number;
  /** HELLO's heartbeat_interval (default 41 250 ms, Discord's). */
  heartbeatIntervalMs?: number;
  /** How long a dropped session stays resumable (default 300 000 ms). */
  resumeWindowMs?: number;
  /** Per-bucket limits reported in X-RateLimit-* and enforced with 429s (default 10 000 per second: headers, no throttling). */
  rateLimit?: RateLimitSettings;
  now?: () => number;
}

export interface SayInput {
  /** Defaults to the first reporter. */
  authorId?: string;
  /** Defaults to the first channel; ignored when threadId is given. */
  channelId?: string;
  threadId?: string;
  content: string;
  attachments?: { filename: string; contentType?: string; data?: Buffer | string; size?: number }[];
  /** Prefixes `<@bot> ` so the message mentions the bot. */
  mentionsBot?: boolean;
  /** Makes the message a reply to this message id (same channel). */
  replyTo?: string;
}

export interface WebhookPostInput {
  channelId?: string;
  threadId?: string;
  username?: string;
  content: string;
}

/** A message as the sandbox and tests read it: author resolved, reactions with their users, thread. */
export interface SandboxMessage {
  id: string;
  channelId: string;
  type: number;
  author: {
    id: string;
    username: string;
    displayName: string;
    persona: Persona | 'bot' | 'webhook';
    bot: boolean;
  };
  webhookId: string | null;
  content: string;
  timestamp: string;
  editedTimestamp: string | null;
  nonce: string | number | null;
  replyTo: string | null;
  mentions: string[];
  attachments: { id: string; filename: string; size: number; contentType: string | null; url: string }[];
  /** As Discord echoes them (action rows of buttons, each with its numeric id). */
  components: Json[];
  embeds: Json[];
  reactions: { emoji: string; count: number; userIds: string[]; me: boolean }[];
  thread: { id: string; name: string; messageCount: number } | null;
}

export interface SandboxUser {
  id: string;
  username: string;
  displayName: string;
  persona: Persona | 'bot';
  bot: boolean;
  roleIds: string[];
}

export interface SandboxState {
  guild: { id: string; name: string };
  application: {
    id: string;
    messageContentIntent: boolean;
    /** Per guild id: whether the bot's invite carried the applications.commands scope. */
    applicationCommandsScope: Record<string, boolean>;
  };
  /** Registered application commands as Discord's REST API shows them. */
  commands: SandboxCommands;
  bot: SandboxUser;
  users: SandboxUser[];
  roles: { id: string; name: string; color: number }[];
  /** Servers the bot is in besides `guild` (seed `otherGuilds`). */
  otherGuilds: { id: string; name: string }[];
  channels: {
    id: string;
    guildId: string;
    name: string;
    topic: string | null;
    mode: 'open' | 'mention' | null;
    lastMessageId: string | null;
  }[];
  threads: {
    id: string;
    guildId: string;
    parentId: string;
    name: string;
    ownerId: string;
    messageCount: number;
    archived: boolean;
  }[];
  gateway: { connectedSessions: number; dispatchPaused: boolean };
  urls: { url: string; apiUrl: string; gatewayUrl: string; sandboxUrl: string };
}

/** The application's commands: global ones and, per guild id, the guild's. */
export interface SandboxCommands {
  global: Json[];
  guilds: Record<string, Json[]>;
}

const MAX_LOG = 50_000;

export type RestExchangeListener = (
  record: RestRequestRecord,
  responseBody: unknown,
  requestContentType: string | null,
) => void;

/**
 * A protocol-faithful Discord on loopback: REST v10 under `/api/v10`, Gateway v10 (JSON) at
 * `/gateway`, a web chat page at `/` and `/sandbox`, a JSON control API under `/sandbox/`, and
 * test hooks. An unmodified discord.js client needs only `rest: { api: discord.apiUrl }`.
 */
export class LocalDiscord {
  readonly token: string;
  readonly guildId: string;
  readonly botId: string;
  readonly applicationId: string;
  /** Every REST request, in arrival order (answered ones; status is the one sent). */
  readonly requests: RestRequestRecord[] = [];
  /** Every gateway frame in and out, and every close. */
  readonly gatewayOps: GatewayOpRecord[] = [];

  private readonly worlds: Worlds;
  private readonly gateway: Gateway;
  private readonly rest: RestApi;
  private readonly control: ControlApi;
  /** OAuth2 (authorize, token, the Bearer user routes): sign in with the local Discord. */
  readonly oauth2: OAuth2Routes;
  private readonly faults = new FaultInjector();
  private readonly interactions: Interactions;
  private readonly applicationCommands: ApplicationCommands;
  private readonly attachments = new Map<string, { data: Buffer; contentType: string | null }>();
  /** One webhook per channel, as a channel's integrations would have. */
  private readonly webhookIds = new Map<string, string>();
  private readonly mint: SnowflakeMint;
  private readonly now: () => number;
  private readonly server: Server;
  private sessionStarts = 0;
  private readonly exchangeListeners = new Set<RestExchangeListener>();
  private dispatchPaused = false;
  private address: AddressInfo | null = null;

  private constructor(private readonly options: LocalDiscordOptions) {
    const seed = localDiscordSeedSchema.parse({
      guild: options.guild,
      channels: options.channels,
      users: options.users,
      bot: options.bot,
      roles: options.roles,
      otherGuilds: options.otherGuilds,
    });
    this.now = options.now ?? Date.now;
    this.mint = new SnowflakeMint(this.now);
    this.token =
      options.token ??
      seed.bot.token ??
      `${Buffer.from(String(Date.now())).toString('base64url')}.${randomBytes(24).toString('base64url')}`;
    // Users and the bot keep one id across every guild, so ids are pinned before any guild is built.
    const bot = { ...seed.bot, id: seed.bot.id ?? this.mint.next() };
    const users = seed.users.map((u) => ({ ...u, id: u.id ?? this.mint.next() }));
    const worldOptions = {
      mint: this.mint,
      dedupeWindowMs: options.dedupeWindowMs ?? 120_000,
      messageContentIntent: options.messageContentIntent ?? true,
      now: this.now,
      attachmentUrl: (_channelId: string, attachmentId: string, filename: string) =>
        `${this.url}/attachments/${attachmentId}/${encodeURIComponent(filename)}`,
    };
    const primary = new DiscordWorld({ ...worldOptions, seed: { ...seed, bot, users } });
    const others = seed.otherGuilds.map(
      (guild) =>
        new DiscordWorld({
          ...worldOptions,
          seed: {
            guild: { id: guild.id, name: guild.name },
            channels: guild.channels,
            roles: [],
            otherGuilds: [],
            bot: { ...bot, roleId: undefined },
            users: users
              .filter((u) => !guild.members || guild.members.includes(u.username))
              .map((u) => ({ ...u, roles: [] })),
          },
        }),
    );
    this.worlds = new Worlds([primary, ...others]);
    this.guildId = primary.guildId;
    this.botId = primary.botId;
    this.applicationId = primary.applicationId;
    this.applicationCommands = new ApplicationCommands(this.applicationId, this.mint);
    if (options.applicationCommandsScope === false)
      for (const w of this.worlds.all) this.applicationCommands.setScope(w.guildId, false);
    this.interactions = new Interactions(this.worlds, this.mint, this.now, this.applicationCommands);

    const log = <T>(list: T[], record: T): void => {
      list.push(record);
      if (list.length > MAX_LOG) list.splice(0, list.length - MAX_LOG);
    };
    this.gateway = new Gateway({
      worlds: this.worlds,
      token: this.token,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
      privileged: {
        messageContent: options.messageContentIntent ?? true,
        guildMembers: options.guildMembersIntent ?? true,
        presences: options.presenceIntent ?? false,
      },
      resumeWindowMs: options.resumeWindowMs ?? 300_000,
      resumeUrl: () => this.gatewayUrl,
      log: (record) => log(this.gatewayOps, record),
      now: this.now,
      onSessionStart: () => (this.sessionStarts += 1),
    });
    this.rest = new RestApi({
      worlds: this.worlds,
      token: this.token,
      gatewayUrl: () => this.gatewayUrl,
      faults: this.faults,
      limiter: new RateLimiter(options.rateLimit ?? { limit: 10_000, windowMs: 1000 }, this.now),
      log: (record) => log(this.requests, record),
      exchange: (record, body, contentType) => {
        for (const listener of this.exchangeListeners) listener({ ...record }, body, contentType);
      },
      sessionStartLimit: () => ({
        total: 1000,
        remaining: Math.max(0, 1000 - this.sessionStarts),
        reset_after: 86_400_000,
        max_concurrency: 1,
      }),
      storeAttachment: (attachmentId, data, contentType) =>
        this.attachments.set(attachmentId, { data, contentType }),
      interactions: this.interactions,
      attachmentSizeLimit: options.attachmentSizeLimit ?? 10 * 1024 * 1024,
      commands: this.applicationCommands,
      now: this.now,
    });
    this.control = new ControlApi(this);
    this.oauth2 = new OAuth2Routes({ worlds: this.worlds, applicationId: this.applicationId, now: this.now });
    this.server = createServer((req, res) => void this.route(req, res));
    this.server.on('upgrade', (req, socket, head) => {
      const path = new URL(req.url ?? '/', 'http://local').pathname;
      if (path === '/gateway' || path.startsWith('/gateway/')) this.gateway.handleUpgrade(req, socket, head);
      else socket.destroy();
    });
  }

  static async start(options: LocalDiscordOptions): Promise<LocalDiscord> {
    const discord = new LocalDiscord(options);
    await new Promise<void>((resolve, reject) => {
      discord.server.once('error', reject);
      discord.server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        discord.server.off('error', reject);
        resolve();
      });
    });
    discord.address = discord.server.address() as AddressInfo;
    return discord;
  }

  /** http://127.0.0.1:PORT */
  get url(): string {
    if (!this.address) throw new Error('LocalDiscord is not listening');
    const host = this.address.family === 'IPv6' ? `[${this.address.address}]` : this.address.address;
    return `http://${host}:${this.address.port}`;
  }

  /** For discord.js: `new Client({ rest: { api: discord.apiUrl } })` (it appends /v10). */
  get apiUrl(): string {
    return `${this.url}/api`;
  }

  get gatewayUrl(): string {
    return `${this.url.replace(/^http/, 'ws')}/gateway`;
  }

  get sandboxUrl(): string {
    return `${this.url}/sandbox`;
  }

  async close(): Promise<void> {
    this.control.close();
    await this.gateway.shutdown();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ------------------------------------------------------------------ lookups

  /** A seeded channel's id by name (`bugs`). */
  channelId(name: string): string {
    const channel = this.worlds.all
      .flatMap((w) => [...w.channels.values()])
      .find((c) => c.name === name.replace(/^#/, ''));
    if (!channel) throw new Error(`no channel named ${name}`);
    return channel.id;
  }

  /** A seeded user's id by username (`alice`), the bot's included. */
  userId(username: string): string {
    const user = [...this.worlds.primary.users.values()].find((u) => u.username === username);
    if (!user) throw new Error(`no user named ${username}`);
    return user.id;
  }

  roleId(name: string): string {
    const role = this.worlds.all.flatMap((w) => [...w.roles.values()]).find((r) => r.name === name);
    if (!role) throw new Error(`no role named ${name}`);
    return role.id;
  }

  state(): SandboxState {
    const world = this.worlds.primary;
    const sandboxUser = (id: string): SandboxUser => {
      const u = world.user(id);
      return {
        id: u.id,
        username: u.username,
        displayName: u.globalName ?? u.username,
        persona: u.persona,
        bot: u.bot,
        roleIds: [...u.roleIds],
      };
    };
    return {
      guild: { id: world.guildId, name: world.guildName },
      otherGuilds: this.worlds.all.slice(1).map((w) => ({ id: w.guildId, name: w.guildName })),
      application: {
        id: world.applicationId,
        messageContentIntent: world.messageContentIntent,
        applicationCommandsScope: Object.fromEntries(
          this.worlds.all.map((w) => [w.guildId, this.applicationCommands.hasScope(w.guildId)]),
        ),
      },
      commands: this.commands(),
      bot: sandboxUser(world.botId),
      users: [...world.users.keys()].filter((id) => id !== world.botId).map(sandboxUser),
      roles: [...world.roles.values()]
        .filter((r) => r.id !== world.guildId)
        .map((r) => ({ id: r.id, name: r.name, color: r.color })),
      channels: this.worlds.all.flatMap((w) =>
        [...w.channels.values()].map((c) => ({
          id: c.id,
          guildId: w.guildId,
          name: c.name,
          topic: c.topic,
          mode: c.mode,
          lastMessageId: c.lastMessageId,
        })),
      ),
      threads: this.threads(),
      gateway: { connectedSessions: this.gateway.connectedSessions, dispatchPaused: this.dispatchPaused },
      urls: { url: this.url, apiUrl: this.apiUrl, gatewayUrl: this.gatewayUrl, sandboxUrl: this.sandboxUrl },
    };
  }

  // ------------------------------------------------------------------ reading

  /** Messages in a channel or thread, oldest first. */
  messages(channelId: string): SandboxMessage[] {
    return this.worlds
      .byChannel(channelId)
      .messagesIn(channelId)
      .map((m) => this.view(m));
  }

  /** Messages in a channel or thread as GET /channels/{id}/messages shapes them, oldest first. */
  rawMessages(channelId: string): Json[] {
    const world = this.worlds.byChannel(channelId);
    return world.messagesIn(channelId).map((m) => world.renderMessage(m));
  }

  message(messageId: string): SandboxMessage | undefined {
    const record = this.worlds.byMessage(messageId)?.findMessage(messageId);
    return record ? this.view(record) : undefined;
  }

  reactions(messageId: string): SandboxMessage['reactions'] {
    return (this.worlds.byMessage(messageId) ?? this.worlds.primary).reactionsOn(messageId).map((r) => ({
      emoji: r.emoji.id ? `${r.emoji.name}:${r.emoji.id}` : r.emoji.name,
      count: r.userIds.length,
      userIds: r.userIds,
      me: r.userIds.includes(this.botId),
    }));
  }

  threads(): SandboxState['threads'] {
    return this.worlds.all.flatMap((w) => [...w.threads.values()].map((t) => this.threadView(t, w.guildId)));
  }

  /** Every REST answer as it is sent, with its body (request body and route in the record). */
  onRestExchange(listener: RestExchangeListener): () => void {
    this.exchangeListeners.add(listener);
    return () => this.exchangeListeners.delete(listener);
  }

  /** The REST routes this server answers (under /api/v10). */
  restRoutes(): { method: string; template: string }[] {
    return this.rest.routeTable();
  }

  interactionLog(): InteractionRecord[] {
    return this.interactions.list();
  }

  /** Registered application commands, Discord-shaped (whatever the scope: this is the sandbox's view). */
  commands(): SandboxCommands {
    const c = this.applicationCommands;
    return {
      global: c.list(null).map(renderCommand),
      guilds: Object.fromEntries(c.guildIds().map((id) => [id, c.list(id).map(renderCommand)])),
    };
  }

  /** One guild's registered commands (the primary guild's by default), Discord-shaped. */
  guildCommands(guildId: string = this.guildId): Json[] {
    return this.applicationCommands.list(guildId).map(renderCommand);
  }

  /** Gateway events as they happen (also while dispatch is paused): the page's live feed uses it. */
  onEvent(listener: (event: WorldEvent) => void): () => void {
    const unsubscribe = this.worlds.all.map((w) => w.subscribe(listener));
    return () => unsubscribe.forEach((u) => u());
  }

  // ------------------------------------------------------------------ acting as users

  /** A user posts a message: stored, then MESSAGE_CREATE dispatched. */
  say(input: SayInput): SandboxMessage {
    const authorId = input.authorId ?? this.firstOf('reporter');
    const channelId = input.threadId ?? input.channelId ?? this.firstChannelId();
    const content = input.mentionsBot ? `<@${this.botId}> ${input.content}` : input.content;
    const files = (input.attachments ?? []).map((a) => {
      const data =
        a.data === undefined
          ? Buffer.alloc(a.size ?? 0)
          : Buffer.isBuffer(a.data)
            ? a.data
            : Buffer.from(a.data);
      return { filename: a.filename, contentType: a.contentType ?? null, data, size: a.size ?? data.length };
    });
    const { message } = this.worlds.byChannel(channelId).postMessage({
      channelId,
      authorId,
      content,
      attachments: files.map((f) => ({ filename: f.filename, size: f.size, contentType: f.contentType })),
      messageReference: input.replyTo ? { message_id: input.replyTo } : null,
    });
    message.attachments.forEach((a, i) =>
      this.attachments.set(a.id, { data: files[i]?.data ?? Buffer.alloc(0), contentType: a.contentType }),
    );
    return this.view(message);
  }

  /** A webhook posts (author.bot, webhook_id set, no member): intake must not take it as a report. */
  postAsWebhook(input: WebhookPostInput): SandboxMessage {
    const channelId = input.threadId ?? input.channelId ?? this.firstChannelId();
    const { message } = this.worlds.byChannel(channelId).postMessage({
      channelId,
      authorId: this.botId,
      content: input.content,
      webhook: { id: this.webhookIdFor(channelId), username: input.username ?? 'Status Hook' },
    });
    return this.view(message);
  }

  /** A user starts a thread on a message (THREAD_CREATE dispatched). */
  startThread(input: {
    messageId: string;
    name: string;
    channelId?: string;
    authorId?: string;
  }): SandboxState['threads'][number] {
    const { world, message } = this.located(input.messageId);
    const thread = world.startThreadFromMessage(
      input.channelId ?? message.channelId,
      input.messageId,
      input.name,
      input.authorId ?? message.authorId,
      undefined,
    );
    return this.threadView(thread, world.guildId);
  }

  /** The author edits their message (MESSAGE_UPDATE dispatched). */
  edit(input: { messageId: string; content: string }): SandboxMessage {
    const { world, message } = this.located(input.messageId);
    return this.view(world.editMessage(message.channelId, message.id, input.content, message.authorId));
  }

  /** The author deletes their message (MESSAGE_DELETE dispatched). */
  deleteMessage(messageId: string): void {
    const { world, message } = this.located(messageId);
    world.deleteMessage(message.channelId, message.id, message.authorId);
  }

  /** Archives (or unarchives) a thread (THREAD_UPDATE). Archived threads leave the active-threads list; a new message unarchives. */
  archiveThread(threadId: string, archived = true): void {
    this.worlds.byChannel(threadId).setThreadArchived(threadId, archived);
  }

  react(input: { userId: string; messageId: string; emoji: string }): void {
    const { world, message } = this.located(input.messageId);
    world.addReaction(message.channelId, message.id, input.emoji, input.userId);
  }

  /** A user runs a slash command (`/caseloop approve`): INTERACTION_CREATE dispatched. */
  slash(
    input: Omit<SlashCommandInput, 'channelId'> & { channelId?: string; threadId?: string },
  ): InteractionRecord {
    return this.interactions.invoke({
      ...input,
      channelId: input.threadId ?? input.channelId ?? this.firstChannelId(),
    });
  }

  /** A user clicks a button on a message: INTERACTION_CREATE type 3 (the button must exist and be enabled). */
  click(input: ComponentClickInput): InteractionRecord {
    return this.interactions.click(input);
  }

  /** A user submits the modal the bot opened in answer to `interactionId`: INTERACTION_CREATE type 5. */
  submitModal(input: ModalSubmitInput): InteractionRecord {
    return this.interactions.submitModal(input);
  }

  /**
   * A user renames a thread (Modify Thread, as its creator or with MANAGE_THREADS): THREAD_UPDATE,
   * then a CHANNEL_NAME_CHANGE (4) message in the thread whose content is the new name.
   */
  renameThread(input: { threadId: string; name: string; authorId: string }): void {
    const world = this.worlds.byChannel(input.threadId);
    const manageThreads =
      (world.permissionsIn(input.authorId, input.threadId) & Permission.MANAGE_THREADS) !== 0n;
    world.modifyThread(input.threadId, input.authorId, manageThreads, { name: input.name });
  }

  /** A moderator locks (or unlocks) a thread: the bot can no longer post in it or unarchive it. */
  lockThread(threadId: string, locked = true): void {
    this.worlds.byChannel(threadId).setThreadLocked(threadId, locked);
  }

  setMemberRoles(userId: string, roleIds: string[]): void {
    this.worlds.primary.setMemberRoles(userId, roleIds);
  }

  /**
   * A server admin sets a channel's overwrite for a role (the guild id is @everyone's) or a member,
   * as in the channel's settings: CHANNEL_UPDATE dispatched; needs no permission of the bot.
   */
  setPermissionOverwrite(
    channelId: string,
    overwrite: { roleId?: string; userId?: string; allow?: PermissionName[]; deny?: PermissionName[] },
  ): void {
    const id = overwrite.roleId ?? overwrite.userId;
    if (!id) throw new Error('setPermissionOverwrite: roleId or userId');
    this.worlds.byChannel(channelId).setPermissionOverwrite(channelId, {
      id,
      type: overwrite.roleId ? OverwriteType.role : OverwriteType.member,
      allow: permissionBits(overwrite.allow ?? []),
      deny: permissionBits(overwrite.deny ?? []),
    });
  }

  deletePermissionOverwrite(channelId: string, overwriteId: string): void {
    this.worlds.byChannel(channelId).deletePermissionOverwrite(channelId, overwriteId);
  }

  /** A server admin edits a role's base permissions (the guild id is @everyone's): GUILD_ROLE_UPDATE. */
  setRolePermissions(roleId: string, permissions: PermissionName[] | bigint): void {
    this.worlds.primary.setRolePermissions(
      roleId,
      typeof permissions === 'bigint' ? permissions : permissionBits(permissions),
    );
  }

  /** The bot's own permissions in a channel or thread, as Discord would enforce them (by name). */
  botPermissionsIn(channelId: string): PermissionName[] {
    const world = this.worlds.byChannel(channelId);
    return permissionNames(world.permissionsIn(world.botId, channelId));
  }

  /** The bot's managed role (Discord creates one per bot). */
  get botRoleId(): string {
    const world = this.worlds.primary;
    const role = [...world.roles.values()].find((r) => r.managed);
    if (!role) throw new Error('no bot role');
    return role.id;
  }

  // ------------------------------------------------------------------ faults

  /**
   * Grants or withdraws the `applications.commands` scope in a guild (the primary one by default):
   * withdrawn, Discord answers the guild's command routes with 403 Missing Access (50001);
   * granted again, it is the operator re-inviting the bot with the scope.
   */
  setApplicationCommandsScope(granted: boolean, guildId: string = this.guildId): void {
    this.worlds.byGuild(guildId);
    this.applicationCommands.setScope(guildId, granted);
  }

  inject(rule: FaultRule): InjectedFault {
    return this.faults.add(rule);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  /** Closes every gateway socket without a close frame (1006): the client resumes and gets the replay. */
  dropGateway(): void {
    this.gateway.drop();
  }

  /** Sends INVALID_SESSION; `resumable: false` forgets the session so the client re-identifies. */
  invalidateSession(resumable: boolean): void {
    this.gateway.invalidateSession(resumable);
  }

  /** The sockets open now stop getting HEARTBEAT_ACK: discord.js treats the link as a zombie and resumes. */
  withholdHeartbeatAcks(): void {
    this.gateway.withholdHeartbeatAcks();
  }

  /** Sends HEARTBEAT (op 1): the client must heartbeat at once. */
  requestHeartbeat(): void {
    this.gateway.requestHeartbeat();
  }

  /** Sends RECONNECT (op 7): the client closes and resumes. */
  requestReconnect(): void {
    this.gateway.requestReconnect();
  }

  /** Closes every gateway socket with `code` (4014: disallowed intents, fatal for the client). */
  closeGateway(code: number, reason = ''): void {
    this.gateway.close(code, reason);
  }

  /** Stored but not dispatched: events while paused never reach the gateway (a client must delta-fetch them). */
  pauseDispatch(): void {
    this.dispatchPaused = true;
    this.gateway.pauseDispatch();
  }

  resumeDispatch(): void {
    this.dispatchPaused = false;
    this.gateway.resumeDispatch();
  }

  /** How many times a client completed IDENTIFY (READY sent). */
  get identifyCount(): number {
    return this.sessionStarts;
  }

  /** How many RESUMED were sent. */
  get resumeCount(): number {
    return this.gatewayOps.filter((o) => o.direction === 'out' && o.t === 'RESUMED').length;
  }

  // ------------------------------------------------------------------ internals

  private firstChannelId(): string {
    const first = [...this.worlds.primary.channels.keys()][0];
    if (!first) throw new Error('no channels');
    return first;
  }

  private firstOf(persona: Persona): string {
    const user = [...this.worlds.primary.users.values()].find((u) => u.persona === persona);
    if (!user) throw new Error(`no ${persona} in the seed`);
    return user.id;
  }

  private webhookIdFor(channelId: string): string {
    const existing = this.webhookIds.get(channelId);
    if (existing) return existing;
    const id = this.mint.next();
    this.webhookIds.set(channelId, id);
    return id;
  }

  private located(messageId: string): { world: DiscordWorld; message: MessageRecord } {
    const world = this.worlds.byMessage(messageId);
    const message = world?.findMessage(messageId);
    if (!world || !message) throw new DiscordApiError('unknownMessage');
    return { world, message };
  }

  private threadView(t: ThreadRecord, guildId: string): SandboxState['threads'][number] {
    return {
      id: t.id,
      guildId,
      parentId: t.parentId,
      name: t.name,
      ownerId: t.ownerId,
      messageCount: t.messageCount,
      archived: t.archived,
    };
  }

  private view(m: MessageRecord): SandboxMessage {
    const world = this.worlds.byChannel(m.channelId);
    const user = m.webhook ? null : world.user(m.authorId);
    const thread = m.threadId ? world.threads.get(m.threadId) : undefined;
    return {
      id: m.id,
      channelId: m.channelId,
      type: m.type,
      author: user
        ? {
            id: user.id,
            username: user.username,
            displayName: user.globalName ?? user.username,
            persona: user.persona,
            bot: user.bot,
          }
        : {
            id: m.authorId,
            username: m.webhook?.username ?? 'webhook',
            displayName: m.webhook?.username ?? 'webhook',
            persona: 'webhook',
            bot: true,
          },
      webhookId: m.webhook?.id ?? null,
      content: m.content,
      timestamp: snowflakeTime(m.id).toISOString(),
      editedTimestamp: m.editedAt,
      nonce: m.nonce,
      replyTo: m.referenceId,
      mentions: [...m.mentionIds],
      attachments: m.attachments.map((a) => ({
        id: a.id,
        filename: a.filename,
        size: a.size,
        contentType: a.contentType,
        url: a.url,
      })),
      components: m.components,
      embeds: m.embeds,
      reactions: this.reactions(m.id),
      thread: thread ? { id: thread.id, name: thread.name, messageCount: thread.messageCount } : null,
    };
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://local');
    const rawPath = (req.url ?? '/').split('?')[0] ?? '/';
    try {
      if (this.oauth2.handles(req, rawPath)) {
        await this.oauth2.handle(req, res, url, rawPath);
      } else if (rawPath.startsWith('/api/v10/')) {
        await this.rest.handle(req, res, rawPath.slice('/api/v10'.length), url.search);
      } else if (rawPath === '/' || rawPath === '/sandbox' || rawPath === '/sandbox/') {
        const html = sandboxPage();
        res.writeHead(200, {
          'Content-Type': 'text/html; charset=utf-8',
          'Content-Length': Buffer.byteLength(html),
          'Content-Security-Policy':
            "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:",
          'Cache-Control': 'no-store',
        });
        res.end(html);
      } else if (rawPath.startsWith('/sandbox/')) {
        await this.control.handle(req, res, url);
      } else if (rawPath.startsWith('/attachments/')) {
        const attachment = this.attachments.get(rawPath.split('/')[2] ?? '');
        if (!attachment) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, {
          'Content-Type': attachment.contentType ?? 'application/octet-stream',
          'Content-Length': attachment.data.length,
        });
        res.end(attachment.data);
      } else if (rawPath === '/healthz') {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
      } else {
        res
          .writeHead(404, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ message: '404: Not Found', code: 0 }));
      }
    } catch {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ message: '500: Internal Server Error', code: 0 }));
    }
  }
}
