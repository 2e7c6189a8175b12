import { DiscordApiError } from './errors';
import { compareSnowflakes } from './snowflake';
import type { ChannelRecord, RoleRecord, ThreadRecord, UserRecord, WorldOptions } from './world-types';

// What a bot with a sensible invite gets: view, send, react, history, embed, attach, threads.
const BOT_PERMISSIONS = [10n, 11n, 6n, 16n, 14n, 15n, 34n, 35n, 38n]
  .reduce((acc, bit) => acc | (1n << bit), 0n)
  .toString();
// @everyone: view, send, react, history, create public and private threads, send in threads.
const EVERYONE_PERMISSIONS = [10n, 11n, 6n, 16n, 35n, 36n, 38n]
  .reduce((acc, bit) => acc | (1n << bit), 0n)
  .toString();

/**
 * The guild itself: its identity, members, roles, text channels and threads, seeded at start, and
 * the lookups that answer with Discord's errors when something is not there.
 */
export class WorldGuild {
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

  constructor(options: WorldOptions) {
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
    });
  }

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

  thread(threadId: string): ThreadRecord {
    const thread = this.threads.get(threadId);
    if (!thread) throw new DiscordApiError('unknownChannel');
    return thread;
  }

  /** Discord lists active threads newest first (by id, descending). */
  activeThreads(): ThreadRecord[] {
    return [...this.threads.values()]
      .filter((t) => !t.archived)
      .sort((a, b) => compareSnowflakes(b.id, a.id));
  }
}
