import { REST, type RESTPostAPIChatInputApplicationCommandsJSONBody, Routes } from 'discord.js';
import { z } from 'zod';
import { discordMessagePayload } from '../intake/inbound-message';

const snowflake = z.string().regex(/^\d{1,25}$/);
const userSchema = z.object({ id: snowflake, username: z.string(), bot: z.boolean().optional() });
const guildSchema = z.object({ id: snowflake, name: z.string(), owner_id: snowflake.optional() });
const permissionBits = z.string().regex(/^\d{1,25}$/);
const overwriteSchema = z.object({
  id: snowflake,
  type: z.union([z.literal(0), z.literal(1)]),
  allow: permissionBits,
  deny: permissionBits,
});
const roleSchema = z.object({ id: snowflake, name: z.string(), permissions: permissionBits });
const channelSchema = z.object({
  id: snowflake,
  type: z.number().int(),
  guild_id: snowflake.optional(),
  parent_id: snowflake.nullable().optional(),
  name: z.string().nullable().optional(),
  permission_overwrites: z.array(overwriteSchema).optional(),
  /** Threads only. */
  thread_metadata: z.object({ archived: z.boolean(), locked: z.boolean().optional() }).optional(),
});
const memberSchema = z.object({ roles: z.array(snowflake), user: userSchema.optional() });
const createdMessageSchema = z.object({
  id: snowflake,
  channel_id: snowflake,
  nonce: z.union([z.string(), z.number()]).nullable().optional(),
});
const fetchedMessageSchema = discordMessagePayload.extend({
  nonce: z.union([z.string(), z.number()]).nullable().optional(),
});

const commandSchema = z.object({ id: snowflake, name: z.string(), version: snowflake });

export type DiscordUser = z.infer<typeof userSchema>;
export type RegisteredCommand = z.infer<typeof commandSchema>;
export type DiscordChannel = z.infer<typeof channelSchema>;
export type DiscordRole = z.infer<typeof roleSchema>;
export type DiscordOverwrite = z.infer<typeof overwriteSchema>;
export type FetchedMessage = z.infer<typeof fetchedMessageSchema>;

/** Thread channel types: announcement, public and private threads. */
export const THREAD_TYPES: ReadonlySet<number> = new Set([10, 11, 12]);

export const EYES = '👀';

export interface PostBody {
  content: string;
  nonce: string;
  replyTo: string | null;
  /** Message components (action rows of buttons), sent as given. */
  components?: readonly unknown[];
  /** Files uploaded with the message (multipart: payload_json + files[n], named in `attachments`). */
  files?: readonly { name: string; data: Buffer; contentType: string }[];
}

/**
 * The REST calls intake makes, each answer validated. It shares the `REST` instance (and so the
 * rate-limit buckets) of the gateway client; discord.js retries 429s and 5xx itself.
 */
export class DiscordRest {
  constructor(private readonly rest: REST) {}

  async me(): Promise<DiscordUser> {
    return userSchema.parse(await this.rest.get(Routes.user('@me')));
  }
  async user(id: string): Promise<DiscordUser> {
    return userSchema.parse(await this.rest.get(Routes.user(id)));
  }
  async guild(id: string): Promise<z.infer<typeof guildSchema>> {
    return guildSchema.parse(await this.rest.get(Routes.guild(id)));
  }
  async channel(id: string): Promise<DiscordChannel> {
    return channelSchema.parse(await this.rest.get(Routes.channel(id)));
  }
  async roles(guildId: string): Promise<DiscordRole[]> {
    return z.array(roleSchema).parse(await this.rest.get(Routes.guildRoles(guildId)));
  }
  async memberRoles(guildId: string, userId: string): Promise<string[]> {
    return memberSchema.parse(await this.rest.get(Routes.guildMember(guildId, userId))).roles;
  }
  async activeThreads(guildId: string): Promise<DiscordChannel[]> {
    const r = z
      .object({ threads: z.array(channelSchema) })
      .parse(await this.rest.get(Routes.guildActiveThreads(guildId)));
    return r.threads;
  }

  /** One page, newest first (Discord's order for `after`). */
  async messagesAfter(channelId: string, after: string | null, limit: number): Promise<FetchedMessage[]> {
    const query = new URLSearchParams({ limit: String(limit) });
    if (after) query.set('after', after);
    return z
      .array(fetchedMessageSchema)
      .parse(await this.rest.get(Routes.channelMessages(channelId), { query }));
  }

  /** The most recent messages of a channel or thread, newest first. */
  async recentMessages(channelId: string, limit: number): Promise<FetchedMessage[]> {
    const query = new URLSearchParams({ limit: String(limit) });
    return z
      .array(fetchedMessageSchema)
      .parse(await this.rest.get(Routes.channelMessages(channelId), { query }));
  }

  /** Nonce enforced, mentions disabled: a retried post returns the stored message instead of a second one. */
  async post(channelId: string, body: PostBody): Promise<{ id: string }> {
    const files = body.files ?? [];
    const res = await this.rest.post(Routes.channelMessages(channelId), {
      ...(files.length > 0
        ? {
            files: files.map((f, i) => ({
              key: `files[${i}]`,
              name: f.name,
              data: f.data,
              contentType: f.contentType,
            })),
          }
        : {}),
      body: {
        ...(files.length > 0 ? { attachments: files.map((f, i) => ({ id: i, filename: f.name })) } : {}),
        content: body.content,
        nonce: body.nonce,
        enforce_nonce: true,
        allowed_mentions: { parse: [] },
        ...(body.components && body.components.length > 0 ? { components: body.components } : {}),
        ...(body.replyTo
          ? { message_reference: { message_id: body.replyTo, fail_if_not_exists: false } }
          : {}),
      },
    });
    return createdMessageSchema.parse(res);
  }

  /** Replaces a message's content in place (PATCH): mentions stay off. */
  async editMessage(channelId: string, messageId: string, content: string): Promise<void> {
    await this.rest.patch(Routes.channelMessage(channelId, messageId), {
      body: { content, allowed_mentions: { parse: [] } },
    });
  }

  /**
   * Reopens an archived thread (Modify Thread, `archived: false`): a member of the thread may, as
   * long as no moderator locked it. Discord refuses edits and reactions in an archived thread (50083);
   * only a new message reopens one by itself.
   */
  async unarchiveThread(threadId: string): Promise<DiscordChannel> {
    return channelSchema.parse(
      await this.rest.patch(Routes.channel(threadId), { body: { archived: false } }),
    );
  }

  async startThread(channelId: string, messageId: string, name: string): Promise<DiscordChannel> {
    return channelSchema.parse(
      await this.rest.post(Routes.threads(channelId, messageId), {
        body: { name: name.slice(0, 100), auto_archive_duration: 10080 },
      }),
    );
  }

  /** Answers a slash command, visible to the invoker only. Interaction callbacks carry their own token, not the bot's. */
  async interactionReply(interactionId: string, interactionToken: string, content: string): Promise<void> {
    await this.rest.post(Routes.interactionCallback(interactionId, interactionToken), {
      auth: false,
      body: { type: 4, data: { content, flags: 64, allowed_mentions: { parse: [] } } },
    });
  }

  /** Answers a button with a modal (callback type 9): the text comes back as a modal submission. */
  async interactionModal(
    interactionId: string,
    interactionToken: string,
    modal: { custom_id: string; title: string; components: readonly unknown[] },
  ): Promise<void> {
    await this.rest.post(Routes.interactionCallback(interactionId, interactionToken), {
      auth: false,
      body: { type: 9, data: modal },
    });
  }

  /** Bulk overwrite of the application's commands in one guild: idempotent, effective at once, and whatever is not listed is removed. */
  async overwriteGuildCommands(
    applicationId: string,
    guildId: string,
    commands: readonly RESTPostAPIChatInputApplicationCommandsJSONBody[],
  ): Promise<RegisteredCommand[]> {
    return z
      .array(commandSchema)
      .parse(
        await this.rest.put(Routes.applicationGuildCommands(applicationId, guildId), { body: commands }),
      );
  }

  async guildCommands(applicationId: string, guildId: string): Promise<RegisteredCommand[]> {
    return z
      .array(commandSchema)
      .parse(await this.rest.get(Routes.applicationGuildCommands(applicationId, guildId)));
  }

  /** Idempotent on Discord's side; discord.js URL-encodes nothing, so the emoji is encoded here. */
  async react(channelId: string, messageId: string, emoji: string): Promise<void> {
    await this.rest.put(Routes.channelMessageOwnReaction(channelId, messageId, encodeURIComponent(emoji)));
  }
}
