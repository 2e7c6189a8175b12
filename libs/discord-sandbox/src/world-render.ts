import { renderOverwrite } from './permissions';
import { discordTimestamp, snowflakeTime } from './snowflake';
import type { WorldGuild } from './world-guild';
import type { MessageStore } from './world-message-store';
import {
  CHANNEL_TYPE,
  type ChannelRecord,
  type Json,
  MESSAGE_TYPE,
  type MessageRecord,
  type RoleRecord,
  type ThreadRecord,
  type UserRecord,
} from './world-types';

/** The guild's records in the shapes Discord's API and gateway send. */
export class WorldRenderer {
  constructor(
    private readonly guild: WorldGuild,
    private readonly store: MessageStore,
  ) {}

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
      ...(role.managed ? { tags: { bot_id: this.guild.botId } } : {}),
    };
  }

  renderChannel(channel: ChannelRecord): Json {
    return {
      id: channel.id,
      type: CHANNEL_TYPE.guildText,
      guild_id: this.guild.guildId,
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
      type: thread.type,
      guild_id: this.guild.guildId,
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
        // "timestamp when the thread's archive status was last changed, used for calculating recent
        // activity" (Channel resource, Thread Metadata); times in Discord's ISO8601 form.
        archive_timestamp: discordTimestamp(new Date(thread.archiveChangedAt)),
        locked: thread.locked,
        create_timestamp: discordTimestamp(new Date(thread.createdAt)),
        ...(thread.type === CHANNEL_TYPE.privateThread ? { invitable: thread.invitable } : {}),
      },
    };
    if (viewerId && thread.memberIds.has(viewerId)) {
      rendered.member = {
        id: thread.id,
        user_id: viewerId,
        join_timestamp: discordTimestamp(new Date(thread.createdAt)),
        flags: 0,
      };
    }
    return rendered;
  }

  renderGuild(): Json {
    const firstChannel = [...this.guild.channels.values()][0];
    return {
      id: this.guild.guildId,
      name: this.guild.guildName,
      icon: null,
      icon_hash: null,
      splash: null,
      discovery_splash: null,
      owner_id: this.guild.ownerId,
      afk_channel_id: null,
      afk_timeout: 300,
      widget_enabled: false,
      widget_channel_id: null,
      verification_level: 0,
      default_message_notifications: 1,
      explicit_content_filter: 0,
      roles: [...this.guild.roles.values()].map((r) => this.renderRole(r)),
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
      joined_at: this.guild.createdAt,
      large: false,
      unavailable: false,
      member_count: this.guild.users.size,
      voice_states: [],
      members: [...this.guild.users.values()].map((u) => this.renderMember(u, true)),
      channels: [...this.guild.channels.values()].map((c) => this.renderChannel(c)),
      threads: this.guild.activeThreads().map((t) => this.renderThread(t, this.guild.botId)),
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
      : this.renderUser(this.guild.user(message.authorId));
    const referenced = message.referenceId ? this.store.findMessage(message.referenceId) : undefined;
    const thread = message.threadId ? this.guild.threads.get(message.threadId) : undefined;
    const reactions = this.store.reactionsOn(message.id);
    const rendered: Json = {
      id: message.id,
      type: message.type,
      channel_id: message.channelId,
      author,
      content: message.content,
      timestamp: discordTimestamp(snowflakeTime(message.id)),
      edited_timestamp: message.editedAt === null ? null : discordTimestamp(new Date(message.editedAt)),
      tts: message.tts,
      mention_everyone: message.mentionEveryone,
      mentions: message.mentionIds.map((userId) => {
        const user = this.guild.user(userId);
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
      ...(message.referenceId !== null || message.referenceChannelId !== null
        ? {
            message_reference: {
              type: 0,
              ...(message.referenceId !== null ? { message_id: message.referenceId } : {}),
              channel_id: message.referenceChannelId ?? message.channelId,
              guild_id: this.guild.guildId,
            },
          }
        : {}),
      // Message resource, note [4]: `referenced_message` belongs to replies and thread starter messages.
      ...(message.type === MESSAGE_TYPE.reply || message.type === MESSAGE_TYPE.threadStarterMessage
        ? { referenced_message: referenced ? this.renderMessage(referenced) : null }
        : {}),
      ...(thread ? { thread: this.renderThread(thread) } : {}),
      ...(reactions.length > 0 && !gateway
        ? {
            reactions: reactions.map((r) => ({
              emoji: r.emoji,
              count: r.userIds.length,
              count_details: { burst: 0, normal: r.userIds.length },
              me: r.userIds.includes(this.guild.botId),
              me_burst: false,
              burst_colors: [],
            })),
          }
        : {}),
    };
    if (gateway) {
      rendered.guild_id = this.guild.guildId;
      // Gateway events, Message Create extra fields (MESSAGE_UPDATE carries the same).
      const where = this.guild.messageable(message.channelId);
      rendered.channel_type = where.kind === 'thread' ? where.thread.type : CHANNEL_TYPE.guildText;
      if (!message.webhook) rendered.member = this.renderMember(this.guild.user(message.authorId));
    }
    return rendered;
  }

  /**
   * What a reader without the message-content privilege sees: Discord blanks content, embeds,
   * attachments and components unless the message mentions the bot or is the bot's own.
   */
  redactForContent(message: MessageRecord, rendered: Json): Json {
    if (message.authorId === this.guild.botId || message.mentionIds.includes(this.guild.botId))
      return rendered;
    return { ...rendered, content: '', embeds: [], attachments: [], components: [] };
  }
}
