import { normaliseEmbeds, normaliseMessageComponents } from './components';
import { DiscordApiError, invalidForm } from './errors';
import type { WorldContext } from './world-context';
import { parseAllowedMentions } from './world-mentions';
import type { WorldThreads } from './world-threads';
import { Intents, MESSAGE_TYPE, type MessageRecord, type PostMessageInput } from './world-types';

/** Messages posted, edited and deleted as Discord validates them, and typing in a channel. */
export class WorldMessages {
  constructor(
    private readonly ctx: WorldContext,
    private readonly threads: WorldThreads,
  ) {}

  postMessage(input: PostMessageInput): { message: MessageRecord; created: boolean } {
    const target = this.ctx.guild.messageable(input.channelId);
    const author = this.ctx.guild.user(input.webhook ? this.ctx.guild.botId : input.authorId);
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

    // enforce_nonce: "If another message was created by the same author with the same nonce, that
    // message will be returned" (Message resource, Create Message): per author, whatever the channel.
    const authorKey = input.webhook ? `webhook:${input.webhook.id}` : author.id;
    const nonceKey =
      input.nonce !== undefined && input.nonce !== null ? `${authorKey}:${String(input.nonce)}` : null;
    if (nonceKey && input.enforceNonce) {
      const seen = this.ctx.store.nonce(nonceKey);
      if (seen && this.ctx.options.now() - seen.at <= this.ctx.options.dedupeWindowMs) {
        const existing = this.ctx.store.findMessage(seen.messageId);
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
      const referenced = this.ctx.store.findMessage(refId);
      if (!referenced || referenced.channelId !== refChannel) {
        if (input.messageReference.fail_if_not_exists !== false) {
          throw invalidForm(['message_reference'], 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', 'Unknown message');
        }
      } else {
        referenceId = referenced.id;
      }
    }

    const id = this.ctx.options.mint.next();
    const mentionIds = [
      ...new Set([...content.matchAll(/<@!?(\d{17,20})>/g)].map((m) => m[1] as string)),
    ].filter((userId) => this.ctx.guild.users.has(userId) && mentions.allowsUser(userId, author.bot));
    const mentionRoleIds = [
      ...new Set([...content.matchAll(/<@&(\d{17,20})>/g)].map((m) => m[1] as string)),
    ].filter((roleId) => this.ctx.guild.roles.has(roleId) && mentions.allowsRole(roleId, author.bot));
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
        const attachmentId = this.ctx.options.mint.next();
        return {
          ...a,
          id: attachmentId,
          url: this.ctx.options.attachmentUrl(input.channelId, attachmentId, a.filename),
        };
      }),
      embeds,
      components,
      referenceId,
      referenceChannelId: null,
      threadId: null,
      flags: 0,
      tts: input.tts ?? false,
      editedAt: null,
    };
    this.ctx.store.add(message);
    if (nonceKey) this.ctx.store.rememberNonce(nonceKey, id, this.ctx.options.now());
    if (target.kind === 'channel') target.channel.lastMessageId = id;
    else {
      // Sending into an archived (unlocked) thread unarchives it, as on Discord.
      if (target.thread.archived) this.threads.setThreadArchived(target.thread.id, false);
      target.thread.lastMessageId = id;
      target.thread.messageCount += 1;
      target.thread.totalMessageSent += 1;
      if (!input.webhook) target.thread.memberIds.add(author.id);
    }
    this.ctx.emit({
      t: 'MESSAGE_CREATE',
      d: this.ctx.render.renderMessage(message, { gateway: true, nonce: true }),
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
    const message = this.ctx.store.message(channelId, messageId);
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
    // Unlike a new message, an edit does not unarchive its thread: "Users cannot edit messages, add
    // reactions, use application commands, or join archived threads" (Threads topic, Active &
    // Archived Threads); 50083 is "an operation on an archived thread, such as editing a message".
    const target = this.ctx.guild.messageable(channelId);
    if (target.kind === 'thread' && target.thread.archived) throw new DiscordApiError('threadArchived');
    message.content = nextContent;
    message.embeds = embeds;
    message.components = components;
    message.attachments = attachments;
    message.editedAt = new Date(this.ctx.options.now()).toISOString();
    this.ctx.emit({
      t: 'MESSAGE_UPDATE',
      d: this.ctx.render.renderMessage(message, { gateway: true }),
      intent: Intents.GuildMessages,
      message,
    });
    return message;
  }

  deleteMessage(channelId: string, messageId: string, actorId: string): void {
    const message = this.ctx.store.message(channelId, messageId);
    if (message.authorId !== actorId) throw new DiscordApiError('missingPermissions');
    this.ctx.store.remove(message);
    this.ctx.emit({
      t: 'MESSAGE_DELETE',
      d: { id: messageId, channel_id: channelId, guild_id: this.ctx.guild.guildId },
      intent: Intents.GuildMessages,
    });
  }

  typing(channelId: string, userId: string): void {
    this.ctx.guild.messageable(channelId);
    this.ctx.emit({
      t: 'TYPING_START',
      d: {
        channel_id: channelId,
        guild_id: this.ctx.guild.guildId,
        user_id: userId,
        timestamp: Math.floor(this.ctx.options.now() / 1000),
        member: this.ctx.render.renderMember(this.ctx.guild.member(userId)),
      },
      intent: Intents.GuildMessageTyping,
    });
  }
}
