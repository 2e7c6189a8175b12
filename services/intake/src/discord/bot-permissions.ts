import { PermissionFlagsBits } from 'discord.js';
import type { DiscordOverwrite, DiscordRest, DiscordRole } from './discord.rest';

/**
 * What intake does in a bound channel and the threads it opens there, and the permission each
 * needs: see it, post, post in its case threads, open them, read them back (reconcile), react (the
 * 👀 acknowledgement), attach the proof, embed links.
 */
export const NEEDED_PERMISSIONS = [
  'ViewChannel',
  'SendMessages',
  'SendMessagesInThreads',
  'CreatePublicThreads',
  'ReadMessageHistory',
  'AddReactions',
  'AttachFiles',
  'EmbedLinks',
] as const satisfies readonly (keyof typeof PermissionFlagsBits)[];

export type NeededPermission = (typeof NEEDED_PERMISSIONS)[number];

/** Discord's names for them (developer docs, "Permissions"), which an operator finds in the docs and the audit log. */
export const DISCORD_PERMISSION_NAME: Record<NeededPermission, string> = {
  ViewChannel: 'VIEW_CHANNEL',
  SendMessages: 'SEND_MESSAGES',
  SendMessagesInThreads: 'SEND_MESSAGES_IN_THREADS',
  CreatePublicThreads: 'CREATE_PUBLIC_THREADS',
  ReadMessageHistory: 'READ_MESSAGE_HISTORY',
  AddReactions: 'ADD_REACTIONS',
  AttachFiles: 'ATTACH_FILES',
  EmbedLinks: 'EMBED_LINKS',
};

export interface PermissionInputs {
  guildId: string;
  ownerId: string | null;
  roles: readonly DiscordRole[];
  member: { id: string; roleIds: readonly string[] };
  overwrites: readonly DiscordOverwrite[];
}

const ALL = Object.values(PermissionFlagsBits).reduce((acc, bit) => acc | bit, 0n);

/**
 * A member's permissions in a channel, as Discord documents the computation: the guild owner has
 * all; otherwise @everyone (the role whose id is the guild's) OR every role of the member, all with
 * ADMINISTRATOR; then the channel's overwrites: @everyone's, the member's roles' (their denies and
 * allows each combined before applying), the member's own — each `(p & ~deny) | allow`.
 */
export function channelPermissions(input: PermissionInputs): bigint {
  if (input.ownerId !== null && input.member.id === input.ownerId) return ALL;
  const roleBits = new Map(input.roles.map((r) => [r.id, BigInt(r.permissions)]));
  const base = [input.guildId, ...input.member.roleIds].reduce(
    (acc, id) => acc | (roleBits.get(id) ?? 0n),
    0n,
  );
  if ((base & PermissionFlagsBits.Administrator) !== 0n) return ALL;

  const byId = new Map(input.overwrites.map((o) => [o.id, o]));
  const apply = (p: bigint, allow: bigint, deny: bigint): bigint => (p & ~deny) | allow;
  const everyone = byId.get(input.guildId);
  let p = everyone ? apply(base, BigInt(everyone.allow), BigInt(everyone.deny)) : base;
  const roleOverwrites = input.member.roleIds
    .map((id) => byId.get(id))
    .filter((o): o is DiscordOverwrite => o !== undefined && o.type === 0);
  p = apply(
    p,
    roleOverwrites.reduce((acc, o) => acc | BigInt(o.allow), 0n),
    roleOverwrites.reduce((acc, o) => acc | BigInt(o.deny), 0n),
  );
  const own = byId.get(input.member.id);
  if (own && own.type === 1) p = apply(p, BigInt(own.allow), BigInt(own.deny));
  return p;
}

export interface ChannelPermissionReport {
  channelId: string;
  name: string | null;
  missing: NeededPermission[];
  /** Held, but of no use: Discord's implicit rules (no VIEW_CHANNEL: nothing; no SEND_MESSAGES: no files, embeds). */
  unusable: { permission: NeededPermission; because: NeededPermission }[];
}

/** Which of the needed permissions `p` lacks, and which it holds in vain. */
export function assess(channelId: string, name: string | null, p: bigint): ChannelPermissionReport {
  const has = (perm: NeededPermission): boolean => (p & PermissionFlagsBits[perm]) !== 0n;
  const missing = NEEDED_PERMISSIONS.filter((perm) => !has(perm));
  const unusable: ChannelPermissionReport['unusable'] = [];
  if (!has('ViewChannel')) {
    for (const perm of NEEDED_PERMISSIONS)
      if (perm !== 'ViewChannel' && has(perm)) unusable.push({ permission: perm, because: 'ViewChannel' });
  } else if (!has('SendMessages')) {
    for (const perm of ['AttachFiles', 'EmbedLinks'] as const)
      if (has(perm)) unusable.push({ permission: perm, because: 'SendMessages' });
  }
  return { channelId, name, missing, unusable };
}

/** One line per channel, in Discord's permission names. */
export function describeReport(r: ChannelPermissionReport): string {
  const where = `#${r.name ?? '?'} (${r.channelId})`;
  if (r.missing.length === 0) return `permissions: ${where} all ${NEEDED_PERMISSIONS.length} present`;
  const names = r.missing.map((m) => DISCORD_PERMISSION_NAME[m]).join(', ');
  const implied =
    r.unusable.length === 0
      ? ''
      : `; without ${DISCORD_PERMISSION_NAME[r.unusable[0]?.because ?? 'ViewChannel']} Discord also ignores ${r.unusable
          .map((u) => DISCORD_PERMISSION_NAME[u.permission])
          .join(', ')}`;
  return `permissions: ${where} missing ${names}${implied}`;
}

/**
 * The bot's permissions in each channel, read over REST as Discord serves them: the guild's owner
 * and roles, the bot's member roles, each channel's overwrites.
 */
export async function readBotPermissions(
  rest: DiscordRest,
  guildId: string,
  botId: string,
  channelIds: readonly string[],
): Promise<ChannelPermissionReport[]> {
  const [guild, roles, roleIds] = await Promise.all([
    rest.guild(guildId),
    rest.roles(guildId),
    rest.memberRoles(guildId, botId),
  ]);
  const reports: ChannelPermissionReport[] = [];
  for (const channelId of channelIds) {
    const channel = await rest.channel(channelId);
    const p = channelPermissions({
      guildId,
      ownerId: guild.owner_id ?? null,
      roles,
      member: { id: botId, roleIds },
      overwrites: channel.permission_overwrites ?? [],
    });
    reports.push(assess(channelId, channel.name ?? null, p));
  }
  return reports;
}
