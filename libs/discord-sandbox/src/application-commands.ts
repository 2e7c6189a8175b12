import { DiscordApiError, type FieldErrors, invalidForm } from './errors';
import type { SnowflakeMint } from './snowflake';
import type { Json } from './world';

/** Application command types: slash (CHAT_INPUT), user and message context-menu commands. */
const CommandType = { ChatInput: 1, User: 2, Message: 3 } as const;
/** SUB_COMMAND … ATTACHMENT. */
const OPTION_TYPES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] as const;
const SUB_COMMAND = 1;
const SUB_COMMAND_GROUP = 2;
const MAX_COMMANDS = 100;
const MAX_OPTIONS = 25;
/** Discord's rule for slash-command and option names (lowercase where a letter has a lowercase form). */
const CHAT_INPUT_NAME = /^[-_\p{L}\p{N}]{1,32}$/u;

/** A command as Discord stores it. */
export interface ApplicationCommandRecord {
  id: string;
  applicationId: string;
  /** null: a global command. */
  guildId: string | null;
  /** Changes whenever the definition does. */
  version: string;
  type: number;
  name: string;
  description: string;
  /** Normalised options, kept as the client sent them (Discord-shaped). */
  options: Json[];
  defaultMemberPermissions: string | null;
  nsfw: boolean;
  contexts: number[] | null;
  integrationTypes: number[];
  nameLocalizations: Json | null;
  descriptionLocalizations: Json | null;
}

type Draft = Omit<ApplicationCommandRecord, 'id' | 'applicationId' | 'guildId' | 'version'>;

/**
 * The application's registered commands, global and per guild, with Discord's bulk-overwrite
 * semantics: a command that keeps its name keeps its id (its version moves only if it changed),
 * commands left out are deleted. Also whether each guild authorised the `applications.commands`
 * scope: without it, Discord answers every guild-command route with 403 Missing Access.
 */
export class ApplicationCommands {
  private readonly byScope = new Map<string, ApplicationCommandRecord[]>();
  private readonly withoutScope = new Set<string>();

  constructor(
    private readonly applicationId: string,
    private readonly mint: SnowflakeMint,
  ) {}

  /** Guild `guildId` authorised (or lost) the applications.commands scope. */
  setScope(guildId: string, granted: boolean): void {
    if (granted) this.withoutScope.delete(guildId);
    else this.withoutScope.add(guildId);
  }

  hasScope(guildId: string): boolean {
    return !this.withoutScope.has(guildId);
  }

  /** Registered commands, in registration order; `guildId` null for the global ones. */
  list(guildId: string | null): ApplicationCommandRecord[] {
    return [...(this.byScope.get(guildId ?? '') ?? [])];
  }

  /** Every guild that has commands registered. */
  guildIds(): string[] {
    return [...this.byScope.keys()].filter((k) => k !== '');
  }

  /** What a user in `guildId` can invoke by this name: the guild's command first, then the global one. */
  find(guildId: string, name: string, type: number = CommandType.ChatInput): ApplicationCommandRecord | null {
    const match = (c: ApplicationCommandRecord) => c.name === name && c.type === type;
    return this.list(guildId).find(match) ?? this.list(null).find(match) ?? null;
  }

  /** PUT …/commands: validates the whole list (Discord's 50035 shape, keyed by index), then replaces. */
  overwrite(guildId: string | null, body: unknown): ApplicationCommandRecord[] {
    if (guildId !== null) this.requireScope(guildId);
    if (!Array.isArray(body)) throw invalidForm(['_root'], 'BASE_TYPE_BAD_TYPE', 'Must be an array.');
    if (body.length > MAX_COMMANDS)
      throw invalidForm(['_root'], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_COMMANDS} or fewer in length.`);
    const errors: FieldErrors = {};
    const drafts: Draft[] = [];
    body.forEach((item, i) => {
      const checked = validateCommand(item);
      if ('errors' in checked) errors[String(i)] = checked.errors;
      else drafts.push(checked.draft);
    });
    if (Object.keys(errors).length === 0) {
      const seen = new Set<string>();
      drafts.forEach((d, i) => {
        const key = `${d.type} ${d.name}`;
        if (seen.has(key))
          errors[String(i)] = {
            name: {
              _errors: [
                err('APPLICATION_COMMANDS_DUPLICATE_NAME', 'Application command names must be unique'),
              ],
            },
          };
        seen.add(key);
      });
    }
    if (Object.keys(errors).length > 0) throw formError(errors);

    const previous = this.list(guildId);
    const next = drafts.map((d): ApplicationCommandRecord => {
      const old = previous.find((c) => c.name === d.name && c.type === d.type);
      const unchanged = old !== undefined && canonical(old) === canonical(d);
      return {
        ...d,
        id: old?.id ?? this.mint.next(),
        applicationId: this.applicationId,
        guildId,
        version: unchanged ? old.version : this.mint.next(),
      };
    });
    this.byScope.set(guildId ?? '', next);
    return [...next];
  }

  /** GET …/commands. */
  read(guildId: string | null): ApplicationCommandRecord[] {
    if (guildId !== null) this.requireScope(guildId);
    return this.list(guildId);
  }

  private requireScope(guildId: string): void {
    if (!this.hasScope(guildId)) throw new DiscordApiError('missingAccess');
  }
}

/** The application command object as Discord's REST API and the gateway show it. */
export function renderCommand(c: ApplicationCommandRecord): Json {
  return {
    id: c.id,
    application_id: c.applicationId,
    version: c.version,
    default_member_permissions: c.defaultMemberPermissions,
    type: c.type,
    name: c.name,
    ...(c.nameLocalizations ? { name_localizations: c.nameLocalizations } : {}),
    description: c.description,
    ...(c.descriptionLocalizations ? { description_localizations: c.descriptionLocalizations } : {}),
    ...(c.guildId ? { guild_id: c.guildId } : { dm_permission: true }),
    ...(c.options.length > 0 ? { options: c.options } : {}),
    nsfw: c.nsfw,
    integration_types: c.integrationTypes,
    contexts: c.contexts,
  };
}

const err = (code: string, message: string) => ({ code, message });
const formError = (errors: FieldErrors): DiscordApiError => new DiscordApiError('invalidFormBody', errors);
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function addError(into: FieldErrors, field: string, code: string, message: string): void {
  const node = into[field];
  if (node && '_errors' in node && Array.isArray(node._errors)) node._errors.push(err(code, message));
  else into[field] = { _errors: [err(code, message)] };
}

function checkName(payload: Json, chatInput: boolean, into: FieldErrors): string | null {
  const name = payload.name;
  if (name === undefined || name === null) {
    addError(into, 'name', 'BASE_TYPE_REQUIRED', 'This field is required');
    return null;
  }
  if (typeof name !== 'string') {
    addError(into, 'name', 'BASE_TYPE_BAD_TYPE', 'Must be a string.');
    return null;
  }
  const length = [...name].length;
  if (length < 1 || length > 32) {
    addError(into, 'name', 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 32 in length.');
    return null;
  }
  if (chatInput && (!CHAT_INPUT_NAME.test(name) || name !== name.toLowerCase())) {
    addError(into, 'name', 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
    return null;
  }
  return name;
}

function checkDescription(payload: Json, required: boolean, into: FieldErrors): string | null {
  const description = payload.description ?? (required ? undefined : '');
  if (description === undefined || description === null) {
    addError(into, 'description', 'BASE_TYPE_REQUIRED', 'This field is required');
    return null;
  }
  if (typeof description !== 'string') {
    addError(into, 'description', 'BASE_TYPE_BAD_TYPE', 'Must be a string.');
    return null;
  }
  const length = [...description].length;
  if (required && (length < 1 || length > 100)) {
    addError(into, 'description', 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
    return null;
  }
  if (!required && length > 0) {
    addError(
      into,
      'description',
      'APPLICATION_COMMAND_INVALID_DESCRIPTION',
      'Context menu commands cannot have a description',
    );
    return null;
  }
  return description;
}

type ErrorNode = FieldErrors[string];

function validateCommand(item: unknown): { draft: Draft } | { errors: ErrorNode } {
  if (!isObject(item))
    return {
      errors: { _errors: [err('MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType')] },
    };
  const into: FieldErrors = {};
  const type = item.type ?? CommandType.ChatInput;
  if (type !== CommandType.ChatInput && type !== CommandType.User && type !== CommandType.Message) {
    addError(into, 'type', 'BASE_TYPE_CHOICES', 'Value must be one of {1, 2, 3}.');
    return { errors: into };
  }
  const chatInput = type === CommandType.ChatInput;
  const name = checkName(item, chatInput, into);
  const description = checkDescription(item, chatInput, into);
  let options: Json[] = [];
  if (item.options !== undefined && item.options !== null) {
    if (chatInput) options = validateOptions(item.options, 'top', into);
    else addError(into, 'options', 'BASE_TYPE_BAD_TYPE', 'Context menu commands cannot have options.');
  }
  if (name === null || description === null || Object.keys(into).length > 0) return { errors: into };
  const permissions = item.default_member_permissions;
  const numbers = (v: unknown): number[] | null =>
    Array.isArray(v) ? v.filter((c): c is number => typeof c === 'number') : null;
  return {
    draft: {
      type,
      name,
      description,
      options,
      defaultMemberPermissions:
        typeof permissions === 'string' || typeof permissions === 'number' ? String(permissions) : null,
      nsfw: item.nsfw === true,
      contexts: numbers(item.contexts),
      integrationTypes: numbers(item.integration_types) ?? [0],
      nameLocalizations: isObject(item.name_localizations) ? item.name_localizations : null,
      descriptionLocalizations: isObject(item.description_localizations)
        ? item.description_localizations
        : null,
    },
  };
}

/**
 * Options of a command (`top`: subcommands, groups or plain options), of a group (`group`:
 * subcommands only) or of a subcommand (`leaf`: plain options only). Errors go to `into.options`.
 */
function validateOptions(raw: unknown, level: 'top' | 'group' | 'leaf', into: FieldErrors): Json[] {
  if (!Array.isArray(raw)) {
    addError(into, 'options', 'BASE_TYPE_BAD_TYPE', 'Must be an array.');
    return [];
  }
  if (raw.length > MAX_OPTIONS) {
    addError(into, 'options', 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_OPTIONS} or fewer in length.`);
    return [];
  }
  const nestedAt = raw.map((o) => isObject(o) && (o.type === SUB_COMMAND || o.type === SUB_COMMAND_GROUP));
  if (nestedAt.includes(true) && nestedAt.includes(false)) {
    addError(
      into,
      'options',
      'APPLICATION_COMMAND_OPTIONS_TYPE_INVALID',
      'Sub-command and sub-command group option types are mutually exclusive to all other types',
    );
    return [];
  }
  const errors: FieldErrors = {};
  const out: Json[] = [];
  const names = new Set<string>();
  let optionalSeen = false;
  raw.forEach((option, i) => {
    if (!isObject(option)) {
      errors[String(i)] = {
        _errors: [err('MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType')],
      };
      return;
    }
    const problems: FieldErrors = {};
    const type = option.type;
    const allowed: readonly number[] =
      level === 'top' ? OPTION_TYPES : level === 'group' ? [SUB_COMMAND] : OPTION_TYPES.slice(2);
    if (typeof type !== 'number' || !allowed.includes(type))
      addError(problems, 'type', 'BASE_TYPE_CHOICES', `Value must be one of {${allowed.join(', ')}}.`);
    const name = checkName(option, true, problems);
    checkDescription(option, true, problems);
    if (name !== null && names.has(name))
      addError(
        problems,
        'name',
        'APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS',
        'Option names must be unique',
      );
    if (name !== null) names.add(name);
    const nested = type === SUB_COMMAND || type === SUB_COMMAND_GROUP;
    let children: Json[] = [];
    if (nested && option.options !== undefined && option.options !== null) {
      children = validateOptions(option.options, type === SUB_COMMAND_GROUP ? 'group' : 'leaf', problems);
    } else if (!nested && option.options !== undefined && option.options !== null) {
      addError(problems, 'options', 'BASE_TYPE_BAD_TYPE', 'Only sub-commands and groups have options.');
    }
    if (!nested) {
      const required = option.required === true;
      if (required && optionalSeen)
        addError(
          problems,
          'required',
          'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID',
          'Required options must be placed before non-required options',
        );
      if (!required) optionalSeen = true;
    }
    if (Object.keys(problems).length > 0) {
      errors[String(i)] = problems;
      return;
    }
    const { options: _children, ...fields } = option;
    out.push({ ...fields, ...(children.length > 0 ? { options: children } : {}) });
  });
  if (Object.keys(errors).length > 0) into.options = errors;
  return out;
}

/** Definition equality for version bumps: field order does not count. */
function canonical(d: Draft): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : isObject(v)
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort(v[k])]),
          )
        : v;
  const { type, name, description, options, defaultMemberPermissions, nsfw, contexts, integrationTypes } = d;
  return JSON.stringify(
    sort({ type, name, description, options, defaultMemberPermissions, nsfw, contexts, integrationTypes }),
  );
}
