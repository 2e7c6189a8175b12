import { randomBytes } from 'node:crypto';
import type { ApplicationCommands } from './application-commands';
import { findButton, normaliseModalComponents } from './components';
import { DiscordApiError, invalidForm } from './errors';
import type { InteractionCallbacks } from './rest';
import { discordTimestamp, type SnowflakeMint } from './snowflake';
import type { DiscordWorld, Json, MessageRecord } from './world';
import type { Worlds } from './worlds';

const InteractionType = { ApplicationCommand: 2, MessageComponent: 3, ModalSubmit: 5 } as const;
const CallbackType = {
  ChannelMessageWithSource: 4,
  DeferredChannelMessageWithSource: 5,
  DeferredUpdateMessage: 6,
  UpdateMessage: 7,
  Modal: 9,
} as const;
const OptionType = { SubCommand: 1, String: 3, Integer: 4, Boolean: 5 } as const;
const EPHEMERAL = 1 << 6;
/** Discord invalidates an interaction's token when its first answer comes later than this. */
const INITIAL_RESPONSE_DEADLINE_MS = 3000;

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

/** A user clicks a button on a message. */
export interface ComponentClickInput {
  authorId: string;
  messageId: string;
  customId: string;
}

/** A user submits the modal a bot opened in answer to `interactionId`. */
export interface ModalSubmitInput {
  authorId: string;
  /** The interaction the bot answered with the modal (callback type 9). */
  interactionId: string;
  /** Text input values by their custom_id. */
  values: Record<string, string>;
}

export interface InteractionRecord {
  id: string;
  token: string;
  /** 2 application command, 3 message component, 5 modal submit. */
  type: 2 | 3 | 5;
  /** The command name, or for components and modals their custom_id. */
  name: string;
  subcommand: string | null;
  options: Record<string, string | number | boolean>;
  channelId: string;
  authorId: string;
  at: number;
  /** The message a component sits on (type 3, or a modal opened from one). */
  messageId: string | null;
  /** Modal submit: the values by text input custom_id. */
  values: Record<string, string>;
  /** `null` until the bot answers; `deferred` after 5/6, `updated` after 7, `modal` after 9. */
  response: 'message' | 'deferred' | 'updated' | 'modal' | null;
  /** The reply the bot gave (visible in the channel unless ephemeral; ephemeral ones are shown to the invoker only). */
  reply: { content: string; ephemeral: boolean; messageId: string | null } | null;
  /** The modal the bot opened (callback type 9). */
  modal: { customId: string; title: string; components: Json[] } | null;
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
      values: { ...i.values },
      reply: i.reply ? { ...i.reply } : null,
      modal: i.modal ? { ...i.modal } : null,
    }));
  }

  private newRecord(
    world: DiscordWorld,
    fields: Pick<InteractionRecord, 'type' | 'name' | 'channelId' | 'authorId' | 'messageId'> &
      Partial<InteractionRecord>,
  ): InteractionRecord {
    const record: InteractionRecord = {
      id: this.mint.next(),
      token: `aW50ZXJhY3Rpb246${randomBytes(24).toString('base64url')}`,
      subcommand: null,
      options: {},
      values: {},
      at: this.now(),
      response: null,
      reply: null,
      modal: null,
      ...fields,
    };
    this.byId.set(record.id, record);
    this.worldOf.set(record.id, world);
    return record;
  }

  /** What every INTERACTION_CREATE carries besides its type and data. */
  private envelope(world: DiscordWorld, record: InteractionRecord): Json {
    const target = world.messageable(record.channelId);
    const channel =
      target.kind === 'channel' ? world.renderChannel(target.channel) : world.renderThread(target.thread);
    return {
      id: record.id,
      application_id: world.applicationId,
      type: record.type,
      token: record.token,
      version: 1,
      guild_id: world.guildId,
      guild: { id: world.guildId, locale: 'en-US', features: [] },
      guild_locale: 'en-US',
      channel_id: record.channelId,
      channel,
      member: { ...world.renderMember(world.member(record.authorId), true), permissions: '2248473465835073' },
      locale: 'en-US',
      app_permissions: '2248473465835073',
      entitlements: [],
      authorizing_integration_owners: { '0': world.guildId },
      context: 0,
      attachment_size_limit: 10485760,
    };
  }

  /** A user clicks a button: INTERACTION_CREATE type 3 with the message and the button's custom_id. */
  click(input: ComponentClickInput): InteractionRecord {
    const world = this.worlds.byMessage(input.messageId);
    const message = world?.findMessage(input.messageId);
    if (!world || !message) throw new DiscordApiError('unknownMessage');
    world.member(input.authorId);
    const button = findButton(message.components, input.customId);
    if (!button) throw invalidForm(['custom_id'], 'COMPONENT_NOT_FOUND', 'Unknown component');
    if (button.disabled === true)
      throw invalidForm(['custom_id'], 'COMPONENT_DISABLED', 'This component is disabled');
    const record = this.newRecord(world, {
      type: InteractionType.MessageComponent,
      name: input.customId,
      channelId: message.channelId,
      authorId: input.authorId,
      messageId: message.id,
    });
    world.dispatch({
      t: 'INTERACTION_CREATE',
      intent: null,
      d: {
        ...this.envelope(world, record),
        message: world.renderMessage(message),
        data: { custom_id: input.customId, component_type: 2, id: button.id },
      },
    });
    return record;
  }

  /** A user submits a modal the bot opened: INTERACTION_CREATE type 5 with every text input's value. */
  submitModal(input: ModalSubmitInput): InteractionRecord {
    const opener = this.byId.get(input.interactionId);
    if (!opener?.modal) throw new DiscordApiError('unknownInteraction');
    if (opener.authorId !== input.authorId) throw new DiscordApiError('unknownInteraction');
    const world = this.world(opener);
    const rows = opener.modal.components.map((row) => {
      const textInput = ((row.components as Json[])[0] ?? {}) as Json;
      const customId = String(textInput.custom_id);
      const value = input.values[customId] ?? '';
      if (textInput.required !== false && value.length === 0)
        throw invalidForm(['data', 'components'], 'BASE_TYPE_REQUIRED', 'This field is required');
      if (typeof textInput.max_length === 'number' && value.length > textInput.max_length)
        throw invalidForm(['data', 'components'], 'BASE_TYPE_MAX_LENGTH', 'Too long');
      if (typeof textInput.min_length === 'number' && value.length > 0 && value.length < textInput.min_length)
        throw invalidForm(['data', 'components'], 'BASE_TYPE_MIN_LENGTH', 'Too short');
      return {
        type: 1,
        id: row.id,
        components: [{ type: 4, id: textInput.id, custom_id: customId, value }],
      };
    });
    const record = this.newRecord(world, {
      type: InteractionType.ModalSubmit,
      name: opener.modal.customId,
      channelId: opener.channelId,
      authorId: input.authorId,
      messageId: opener.messageId,
      values: Object.fromEntries(
        rows.map((r) => [r.components[0]?.custom_id as string, r.components[0]?.value as string]),
      ),
    });
    const message = opener.messageId ? world.findMessage(opener.messageId) : undefined;
    world.dispatch({
      t: 'INTERACTION_CREATE',
      intent: null,
      d: {
        ...this.envelope(world, record),
        ...(message ? { message: world.renderMessage(message) } : {}),
        data: { custom_id: opener.modal.customId, components: rows },
      },
    });
    return record;
  }

  invoke(input: SlashCommandInput): InteractionRecord {
    const world = this.worlds.byChannel(input.channelId);
    world.messageable(input.channelId);
    world.member(input.authorId);
    const options = input.options ?? {};
    const record = this.newRecord(world, {
      type: InteractionType.ApplicationCommand,
      name: input.name,
      subcommand: input.subcommand ?? null,
      options: { ...options },
      channelId: input.channelId,
      authorId: input.authorId,
      messageId: null,
    });
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
    world.dispatch({
      t: 'INTERACTION_CREATE',
      intent: null,
      d: {
        ...this.envelope(world, record),
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

  /**
   * The bot's answer (within 3 s on Discord): 4 a message, 5 a deferred message, 6 a deferred
   * update and 7 an update of the component's message (components and modals from one only),
   * 9 a modal (not in answer to a modal). `with_response=true` returns the callback object with
   * `response_message_id` only where a message exists.
   */
  callback(
    interactionId: string,
    token: string,
    body: unknown,
    query: URLSearchParams,
  ): { status: number; body?: unknown } {
    const record = this.byId.get(interactionId);
    if (!record || record.token !== token) throw new DiscordApiError('unknownInteraction');
    if (record.response) throw new DiscordApiError('interactionAcknowledged');
    // "you must send an initial response within 3 seconds of receiving the event. If the 3 second
    // deadline is exceeded, the token will be invalidated" (Receiving and Responding to Interactions).
    if (this.now() - record.at > INITIAL_RESPONSE_DEADLINE_MS)
      throw new DiscordApiError('unknownInteraction');
    const payload = (typeof body === 'object' && body !== null ? body : {}) as {
      type?: unknown;
      data?: Json;
    };
    const data = payload.data ?? {};
    const world = this.world(record);
    const onMessage = record.messageId !== null;
    let message: MessageRecord | null = null;
    let messageId: string | null = null;
    switch (payload.type) {
      case CallbackType.ChannelMessageWithSource:
        message = this.answer(record, data);
        messageId = record.reply?.messageId ?? null;
        record.response = 'message';
        break;
      case CallbackType.DeferredChannelMessageWithSource:
        record.response = 'deferred';
        break;
      case CallbackType.DeferredUpdateMessage:
      case CallbackType.UpdateMessage: {
        if (!onMessage)
          throw invalidForm(['type'], 'INTERACTION_RESPONSE_TYPE_INVALID', 'Invalid callback type');
        if (payload.type === CallbackType.UpdateMessage) {
          const target = world.findMessage(record.messageId as string);
          if (!target) throw new DiscordApiError('unknownMessage');
          message = world.editMessage(target.channelId, target.id, data.content, world.botId, {
            ...(data.embeds !== undefined ? { embeds: data.embeds } : {}),
            ...(data.components !== undefined ? { components: data.components } : {}),
          });
          messageId = message.id;
          record.response = 'updated';
        } else {
          record.response = 'deferred';
        }
        break;
      }
      case CallbackType.Modal: {
        if (record.type === InteractionType.ModalSubmit)
          throw invalidForm(['type'], 'INTERACTION_RESPONSE_TYPE_INVALID', 'Invalid callback type');
        const customId = data.custom_id;
        const title = data.title;
        if (typeof customId !== 'string' || customId.length === 0 || customId.length > 100)
          throw invalidForm(
            ['data', 'custom_id'],
            'BASE_TYPE_BAD_LENGTH',
            'Must be between 1 and 100 in length.',
          );
        if (typeof title !== 'string' || title.length === 0 || title.length > 45)
          throw invalidForm(['data', 'title'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 45 in length.');
        record.modal = { customId, title, components: normaliseModalComponents(data.components) };
        record.response = 'modal';
        break;
      }
      default:
        throw invalidForm(
          ['type'],
          'BASE_TYPE_CHOICES',
          'Value must be one of {1, 4, 5, 6, 7, 8, 9, 10, 12}.',
        );
    }
    if (query.get('with_response') !== 'true') return { status: 204 };
    return {
      status: 200,
      body: {
        interaction: {
          id: record.id,
          type: record.type,
          ...(messageId ? { response_message_id: messageId } : {}),
          response_message_loading: record.response === 'deferred' && !onMessage,
          response_message_ephemeral: record.reply?.ephemeral ?? false,
          channel_id: record.channelId,
          guild_id: world.guildId,
        },
        // Only a created or updated message is a resource; deferred answers and modals have none.
        ...(message
          ? { resource: { type: payload.type, message: world.renderMessage(message) } }
          : record.reply?.ephemeral && messageId
            ? { resource: { type: payload.type, message: this.ephemeralShape(record) } }
            : {}),
      },
    };
  }

  editOriginal(applicationId: string, token: string, body: unknown): { status: number; body?: unknown } {
    const record = this.byToken(applicationId, token);
    if (!record.response || record.response === 'modal') throw new DiscordApiError('unknownMessage');
    const data = (typeof body === 'object' && body !== null ? body : {}) as Json;
    if (record.messageId && (record.response === 'deferred' || record.response === 'updated')) {
      // After 6/7 the original response is the component's own message.
      const world = this.world(record);
      const target = world.findMessage(record.messageId);
      if (!target) throw new DiscordApiError('unknownMessage');
      const edited = world.editMessage(target.channelId, target.id, data.content, world.botId, {
        ...(data.embeds !== undefined ? { embeds: data.embeds } : {}),
        ...(data.components !== undefined ? { components: data.components } : {}),
      });
      record.response = 'updated';
      return { status: 200, body: world.renderMessage(edited) };
    }
    if (record.reply?.ephemeral) {
      record.reply = {
        ...record.reply,
        content: typeof data.content === 'string' ? data.content : record.reply.content,
      };
      return { status: 200, body: this.ephemeralShape(record) };
    }
    const message = this.answer(record, data);
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
      // Discord keeps an ephemeral message (with an id) that only the invoker sees.
      record.reply = { content, ephemeral, messageId: this.mint.next() };
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
      id: record.reply?.messageId ?? this.mint.next(),
      type: 20,
      channel_id: record.channelId,
      author: this.worlds.primary.renderUser(this.worlds.primary.user(this.worlds.primary.botId)),
      content: record.reply?.content ?? '',
      timestamp: discordTimestamp(new Date(this.now())),
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
