import { invalidForm } from './errors';

/** `allowed_mentions` of a message as Discord reads it: which of the mentions in its content count. */
export interface MentionPolicy {
  allowsUser(userId: string, authorIsBot: boolean): boolean;
  allowsRole(roleId: string, authorIsBot: boolean): boolean;
  allowsEveryone(authorIsBot: boolean): boolean;
}

export function parseAllowedMentions(raw: unknown): MentionPolicy {
  if (raw === undefined || raw === null) {
    return { allowsUser: () => true, allowsRole: () => true, allowsEveryone: () => true };
  }
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw invalidForm(
      ['allowed_mentions'],
      'MODEL_TYPE_CONVERT',
      'Only dictionaries may be used in a ModelType',
    );
  const am = raw as { parse?: unknown; users?: unknown; roles?: unknown; replied_user?: unknown };
  const parse = am.parse ?? [];
  if (!Array.isArray(parse) || parse.some((p) => p !== 'users' && p !== 'roles' && p !== 'everyone')) {
    throw invalidForm(
      ['allowed_mentions', 'parse'],
      'BASE_TYPE_CHOICES',
      'Value must be one of {"roles", "users", "everyone"}.',
    );
  }
  const users = am.users ?? [];
  const roles = am.roles ?? [];
  if (!Array.isArray(users) || !Array.isArray(roles))
    throw invalidForm(['allowed_mentions'], 'BASE_TYPE_BAD_TYPE', 'Must be an array.');
  if (parse.includes('users') && users.length > 0) {
    throw invalidForm(
      ['allowed_mentions'],
      'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
      'parse:["users"] and users: [ids...] are mutually exclusive.',
    );
  }
  if (parse.includes('roles') && roles.length > 0) {
    throw invalidForm(
      ['allowed_mentions'],
      'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
      'parse:["roles"] and roles: [ids...] are mutually exclusive.',
    );
  }
  if (users.length > 100 || roles.length > 100)
    throw invalidForm(['allowed_mentions'], 'BASE_TYPE_MAX_LENGTH', 'Must be 100 or fewer in length.');
  const userSet = new Set(users.map(String));
  const roleSet = new Set(roles.map(String));
  return {
    allowsUser: (userId) => parse.includes('users') || userSet.has(userId),
    allowsRole: (roleId) => parse.includes('roles') || roleSet.has(roleId),
    allowsEveryone: () => parse.includes('everyone'),
  };
}
