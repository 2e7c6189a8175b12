import { randomBytes } from 'node:crypto';
import type { ApplicationCommands } from './application-commands';
import { DiscordApiError, invalidForm } from './errors';
import type { InteractionCallbacks } from './rest';
import type { SnowflakeMint } from './snowflake';
import type { DiscordWorld, Json, MessageRecord } from './world';
import type { Worlds } from './worlds';

const InteractionType = { ApplicationCommand: 2 } as const;
const CallbackType = { ChannelMessageWithSource: 4, DeferredChannelMessageWithSource: 5 } as const;
const OptionType = { SubCommand: 1, String: 3, Integer: 4, Boolean: 5 } as const;
const EPHEMERAL = 1 << 6;

export interface SlashCommandInput {
  authorId: string;
  /** The channel or thread the command is used in. */
  channelId: string;
  /** e.g. `caseloop`. */
  name: string;
  /** e.g. `approve`. */
  subcommand?: string;
  options?: Record<string, string | number | boolean>;
}

export interface InteractionRecord {
  id: string;
  token: string;
  name: string;
  subcommand: string | null;
  options: Record<string, string | number | boolean>;
  channelId: string;
  authorId: string;
  at: number;
  /** `null` until the bot answers; `deferred` after a type-5 callback. */
  response: 'message' | 'deferred' | null;
  /** The reply the bot gave (visible in the channel unless ephemeral). */
  reply: { content: string; ephemeral: boolean; messageId: string | null } | null;
}

/** Slash commands: INTERACTION_CREATE out, callbacks and `@original` edits in. */
export class Interactions implements InteractionCallbacks {
  private readonly byId = new Map<string, InteractionRecord>();
  private readonly worldOf = new Map<string, DiscordWorld>();
  private readonly commandIds = new Map<string, string>();

  constructor(
    private readonly worlds: Worlds,
    private readonly mint: SnowflakeMint,
    private readonly now: () => number,
    private readonly registered: ApplicationCommands,
  ) {}

  list(): InteractionRecord[] {
    return [...this.byId.values()].map((i) => ({
      ...i,
      options: { ...i.options },
      reply: i.reply ? { ...i.reply } : null,
    }));
  }

  invoke(input: SlashCommandInput): InteractionRecord {
    const world = this.worlds.byChannel(input.channelId);
    const target = world.messageable(input.channelId);
    const member = world.member(input.authorId);
    const id = this.mint.next();
    const token = `aW50ZXJhY3Rpb246${randomBytes(24).toString('base64url')}`;
    const options = input.options ?? {};
    const record: InteractionRecord = {
      id,
      token,
      name: input.name,
      subcommand: input.subcommand ?? null,
      options: { ...options },
      channelId: input.channelId,
      authorId: input.authorId,
      at: this.now(),
      response: null,
      reply: null,
    };
    this.byId.set(id, record);
    this.worldOf.set(id, world);
    // A registered command keeps its id; tests may also invoke one nobody registered.
    const registered = this.registered.find(world.guildId, input.name);
    const commandId = registered?.id ?? this.commandIds.get(input.name) ?? this.mint.next();
    this.commandIds.set(input.name, commandId);
    const leafOptions = Object.entries(options).map(([name, value]) => ({
      name,
      type:
        typeof value === 'boolean'
          ? OptionType.Boolean
          : typeof value === 'number'
            ? OptionType.Integer
            : OptionType.String,
      value,
    }));
    const channel =
      target.kind === 'channel' ? world.renderChannel(target.channel) : world.renderThread(target.thread);
    world.dispatch({
      t: 'INTERACTION_CREATE',
      intent: null,
      d: {
        id,
        application_id: world.applicationId,
        type: InteractionType.ApplicationCommand,
        token,
        version: 1,
        guild_id: world.guildId,
        guild: { id: world.guildId, locale: 'en-US', features: [] },
        guild_locale: 'en-US',
        channel_id: input.channelId,
        channel,
        member: { ...world.renderMember(member, true), permissions: '2248473465835073' },
        locale: 'en-US',
        app_permissions: '2248473465835073',
        entitlements: [],
        authorizing_integration_owners: { '0': world.guildId },
        context: 0,
        attachment_size_limit: 10485760,
        data: {
          id: commandId,
          name: input.name,
          type: 1,
          // A global command's data carries no guild_id; a guild command's does.
          ...(registered && registered.guildId === null ? {} : { guild_id: world.guildId }),
          options: input.subcommand
            ? [{ name: input.subcommand, type: OptionType.SubCommand, options: leafOptions }]
            : leafOptions,
        },
      },
    });
    return record;
  }

  callback(
    interactionId: string,
    token: string,
    body: unknown,
    query: URLSearchParams,
  ): { status: number; body?: unknown } {
    const record = this.byId.get(interactionId);
    if (!record || record.token !== token) throw new DiscordApiError('unknownInteraction');
    if (record.response) throw new DiscordApiError('interactionAcknowledged');
    const payload = (typeof body === 'object' && body !== null ? body : {}) as {
      type?: unknown;
      data?: Json;
    };
    let message: MessageRecord | null = null;
    if (payload.type === CallbackType.ChannelMessageWithSource) {
      message = this.answer(record, payload.data ?? {});
      record.response = 'message';
    } else if (payload.type === CallbackType.DeferredChannelMessageWithSource) {
      record.response = 'deferred';
    } else {
      throw invalidForm(['type'], 'BASE_TYPE_CHOICES', 'Value must be one of {4, 5}.');
    }
    if (query.get('with_response') !== 'true') return { status: 204 };
    return {
      status: 200,
      body: {
        interaction: {
          id: record.id,
          type: InteractionType.ApplicationCommand,
          response_message_id: message?.id ?? null,
          response_message_loading: record.response === 'deferred',
          response_message_ephemeral: record.reply?.ephemeral ?? false,
        },
        resource: message
          ? { type: payload.type, message: this.world(record).renderMessage(message) }
          : { type: payload.type },
      },
    };
  }

  editOriginal(applicationId: string, token: string, body: unknown): { status: number; body?: unknown } {
    const record = this.byToken(applicationId, token);
    if (!record.response) throw new DiscordApiError('unknownMessage');
    const message = this.answer(record, (typeof body === 'object' && body !== null ? body : {}) as Json);
    record.response = 'message';
    return {
      status: 200,
      body: message ? this.world(record).renderMessage(message) : this.ephemeralShape(record),
    };
  }

  followUp(applicationId: string, token: string, body: unknown): { status: number; body?: unknown } {
    const record = this.byToken(applicationId, token);
    if (!record.response) throw new DiscordApiError('unknownInteraction');
    const data = (typeof body === 'object' && body !== null ? body : {}) as Json;
    const world = this.world(record);
    const { message } = world.postMessage({
      channelId: record.channelId,
      authorId: world.botId,
      content: typeof data.content === 'string' ? data.content : '',
    });
    return { status: 200, body: world.renderMessage(message) };
  }

  private world(record: InteractionRecord): DiscordWorld {
    return this.worldOf.get(record.id) ?? this.worlds.primary;
  }

  private byToken(applicationId: string, token: string): InteractionRecord {
    if (applicationId !== this.worlds.primary.applicationId) throw new DiscordApiError('unknownInteraction');
    const record = [...this.byId.values()].find((i) => i.token === token);
    if (!record) throw new DiscordApiError('unknownInteraction');
    return record;
  }

  /** Ephemeral replies are seen only by the invoker, so they are recorded but not posted in the channel. */
  private answer(record: InteractionRecord, data: Json): MessageRecord | null {
    const content = typeof data.content === 'string' ? data.content : '';
    const ephemeral = typeof data.flags === 'number' && (data.flags & EPHEMERAL) !== 0;
    if (ephemeral) {
      record.reply = { content, ephemeral, messageId: null };
      return null;
    }
    const world = this.world(record);
    const { message } = world.postMessage({
      channelId: record.channelId,
      authorId: world.botId,
      content,
      allowedMentions: data.allowed_mentions,
    });
    record.reply = { content, ephemeral, messageId: message.id };
    return message;
  }

  private ephemeralShape(record: InteractionRecord): Json {
    return {
      id: this.mint.next(),
      type: 20,
      channel_id: record.channelId,
      author: this.worlds.primary.renderUser(this.worlds.primary.user(this.worlds.primary.botId)),
      content: record.reply?.content ?? '',
      timestamp: new Date(this.now()).toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      components: [],
      pinned: false,
      flags: EPHEMERAL,
      webhook_id: this.worlds.primary.applicationId,
    };
  }
}
