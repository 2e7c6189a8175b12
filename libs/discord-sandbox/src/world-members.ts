import { DiscordApiError, invalidForm } from './errors';
import {
  computePermissions,
  OverwriteType,
  Permission,
  type PermissionOverwrite,
  usablePermissions,
} from './permissions';
import type { WorldContext } from './world-context';
import { type ChannelRecord, Intents, type RoleRecord, type UserRecord } from './world-types';

/**
 * Who may do what: members' roles, roles' base permissions, channels' permission overwrites, and
 * the permissions Discord computes from them.
 */
export class WorldMembers {
  constructor(private readonly ctx: WorldContext) {}

  setMemberRoles(userId: string, roleIds: string[]): UserRecord {
    const member = this.ctx.guild.member(userId);
    for (const roleId of roleIds)
      if (!this.ctx.guild.roles.has(roleId))
        throw invalidForm(['roles'], 'UNKNOWN_ROLE', `Unknown role ${roleId}`);
    member.roleIds = [...roleIds];
    this.ctx.emit({
      t: 'GUILD_MEMBER_UPDATE',
      d: { guild_id: this.ctx.guild.guildId, ...this.ctx.render.renderMember(member, true) },
      intent: Intents.GuildMembers,
    });
    return member;
  }

  /**
   * What `userId` may do in a channel or thread, as Discord computes it: guild roles, then the
   * channel's overwrites (a thread uses its parent's), then the implicit rules (no VIEW_CHANNEL, no
   * send right → no files, embeds, mentions of everyone).
   */
  permissionsIn(userId: string, channelId: string): bigint {
    const target = this.ctx.guild.messageable(channelId);
    const channel =
      target.kind === 'channel' ? target.channel : this.ctx.guild.channels.get(target.thread.parentId);
    const member = this.ctx.guild.member(userId);
    const raw = computePermissions(
      {
        guildId: this.ctx.guild.guildId,
        ownerId: this.ctx.guild.ownerId,
        rolePermissions: (roleId) => {
          const role = this.ctx.guild.roles.get(roleId);
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
    if (overwrite.type === OverwriteType.role && !this.ctx.guild.roles.has(overwrite.id))
      throw new DiscordApiError('unknownRole');
    if (overwrite.type === OverwriteType.member) this.ctx.guild.member(overwrite.id);
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
    const role = this.ctx.guild.roles.get(roleId);
    if (!role) throw new DiscordApiError('unknownRole');
    role.permissions = permissions.toString();
    this.ctx.emit({
      t: 'GUILD_ROLE_UPDATE',
      d: { guild_id: this.ctx.guild.guildId, role: this.ctx.render.renderRole(role) },
      intent: Intents.Guilds,
    });
    return role;
  }

  /** Modify Channel (`PATCH /channels/{id}`) of a guild text channel: `name` 1–100, `topic` ≤ 1024. */
  updateChannel(channelId: string, payload: Record<string, unknown>): ChannelRecord {
    const channel = this.overwritableChannel(channelId);
    const { name, topic } = payload;
    if (name !== undefined && (typeof name !== 'string' || name.length < 1 || name.length > 100))
      throw invalidForm(['name'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
    if (topic !== undefined && topic !== null && (typeof topic !== 'string' || topic.length > 1024))
      throw invalidForm(['topic'], 'BASE_TYPE_MAX_LENGTH', 'Must be 1024 or fewer in length.');
    if (typeof name === 'string') channel.name = name;
    if (topic !== undefined) channel.topic = typeof topic === 'string' ? topic : null;
    this.emitChannelUpdate(channel);
    return channel;
  }

  private overwritableChannel(channelId: string): ChannelRecord {
    const target = this.ctx.guild.messageable(channelId);
    if (target.kind !== 'channel') throw new DiscordApiError('wrongChannelType');
    return target.channel;
  }

  private emitChannelUpdate(channel: ChannelRecord): void {
    this.ctx.emit({ t: 'CHANNEL_UPDATE', d: this.ctx.render.renderChannel(channel), intent: Intents.Guilds });
  }
}
