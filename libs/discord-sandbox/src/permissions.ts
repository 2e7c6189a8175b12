import { invalidForm } from './errors';

/** Discord's permission bits (developer docs, "Permissions") that this stand-in models or enforces. */
export const Permission = {
  ADMINISTRATOR: 1n << 3n,
  MANAGE_CHANNELS: 1n << 4n,
  ADD_REACTIONS: 1n << 6n,
  VIEW_CHANNEL: 1n << 10n,
  SEND_MESSAGES: 1n << 11n,
  SEND_TTS_MESSAGES: 1n << 12n,
  MANAGE_MESSAGES: 1n << 13n,
  EMBED_LINKS: 1n << 14n,
  ATTACH_FILES: 1n << 15n,
  READ_MESSAGE_HISTORY: 1n << 16n,
  MENTION_EVERYONE: 1n << 17n,
  MANAGE_ROLES: 1n << 28n,
  MANAGE_THREADS: 1n << 34n,
  CREATE_PUBLIC_THREADS: 1n << 35n,
  CREATE_PRIVATE_THREADS: 1n << 36n,
  SEND_MESSAGES_IN_THREADS: 1n << 38n,
} as const;

export type PermissionName = keyof typeof Permission;

/** Every bit Discord defines today, up to USE_EXTERNAL_APPS (1 << 50): what the owner and administrators hold. */
export const ALL_PERMISSIONS = (1n << 51n) - 1n;

export const OverwriteType = { role: 0, member: 1 } as const;

/** A channel's permission overwrite for one role (type 0) or one member (type 1). */
export interface PermissionOverwrite {
  id: string;
  type: 0 | 1;
  allow: bigint;
  deny: bigint;
}

export const permissionBits = (names: readonly PermissionName[]): bigint =>
  names.reduce((acc, name) => acc | Permission[name], 0n);

export const permissionNames = (bits: bigint): PermissionName[] =>
  (Object.keys(Permission) as PermissionName[]).filter((name) => (bits & Permission[name]) !== 0n);

/** What Discord needs to compute a member's permissions in a channel. */
export interface PermissionScope {
  guildId: string;
  ownerId: string;
  rolePermissions: (roleId: string) => bigint | undefined;
}

/**
 * Discord's documented computation ("Permission Overwrites"): the owner holds everything; else
 * @everyone's permissions OR the member's roles', everything with ADMINISTRATOR; then the channel's
 * @everyone overwrite, the member's role overwrites (deny and allow each combined), and the
 * member's own overwrite, each as `(p & ~deny) | allow`.
 */
export function computePermissions(
  scope: PermissionScope,
  member: { id: string; roleIds: readonly string[] },
  overwrites: ReadonlyMap<string, PermissionOverwrite>,
): bigint {
  if (member.id === scope.ownerId) return ALL_PERMISSIONS;
  let base = scope.rolePermissions(scope.guildId) ?? 0n;
  for (const roleId of member.roleIds) base |= scope.rolePermissions(roleId) ?? 0n;
  if ((base & Permission.ADMINISTRATOR) !== 0n) return ALL_PERMISSIONS;

  let p = base;
  const everyone = overwrites.get(scope.guildId);
  if (everyone) p = (p & ~everyone.deny) | everyone.allow;
  let allow = 0n;
  let deny = 0n;
  for (const roleId of member.roleIds) {
    const o = overwrites.get(roleId);
    if (o && o.type === OverwriteType.role) {
      allow |= o.allow;
      deny |= o.deny;
    }
  }
  p = (p & ~deny) | allow;
  const own = overwrites.get(member.id);
  if (own && own.type === OverwriteType.member) p = (p & ~own.deny) | own.allow;
  return p;
}

/**
 * Discord's implicit permissions: without VIEW_CHANNEL nothing else applies; without the right to
 * send (SEND_MESSAGES in a channel, SEND_MESSAGES_IN_THREADS in a thread, which inherits its
 * parent's permissions otherwise) mentioning everyone, TTS, files and embeds do not either.
 */
export function usablePermissions(p: bigint, where: 'channel' | 'thread'): bigint {
  if ((p & ALL_PERMISSIONS) === ALL_PERMISSIONS) return p;
  if ((p & Permission.VIEW_CHANNEL) === 0n) return 0n;
  const send = where === 'thread' ? Permission.SEND_MESSAGES_IN_THREADS : Permission.SEND_MESSAGES;
  if ((p & send) === 0n)
    return (
      p &
      ~(
        Permission.MENTION_EVERYONE |
        Permission.SEND_TTS_MESSAGES |
        Permission.ATTACH_FILES |
        Permission.EMBED_LINKS
      )
    );
  return p;
}

/**
 * The body of `PUT /channels/{id}/permissions/{overwrite_id}`: `type` 0 or 1, `allow` and `deny` as
 * permission strings (Discord also takes integers); anything else is 50035.
 */
export function parseOverwriteBody(id: string, body: unknown): PermissionOverwrite {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  if (b.type !== 0 && b.type !== 1)
    throw invalidForm(['type'], 'BASE_TYPE_CHOICES', 'Value must be one of {0, 1}.');
  const bits = (field: 'allow' | 'deny'): bigint => {
    const raw = b[field];
    if (raw === undefined || raw === null) return 0n;
    if (
      (typeof raw === 'string' && /^\d{1,20}$/.test(raw)) ||
      (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0)
    )
      return BigInt(raw) & ALL_PERMISSIONS;
    throw invalidForm([field], 'NUMBER_TYPE_COERCE', `Value "${String(raw)}" is not int.`);
  };
  return { id, type: b.type, allow: bits('allow'), deny: bits('deny') };
}

export const renderOverwrite = (o: PermissionOverwrite): Record<string, unknown> => ({
  id: o.id,
  type: o.type,
  allow: o.allow.toString(),
  deny: o.deny.toString(),
});
