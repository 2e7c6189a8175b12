/**
 * Discord's JSON error codes that this stand-in answers with. Each carries its HTTP status and
 * Discord's wording so clients that branch on `code` (discord.js `DiscordAPIError.code`) behave as
 * they would against the real API.
 */
export const DISCORD_ERRORS = {
  general: { code: 0, status: 400, message: 'General error' },
  unauthorized: { code: 0, status: 401, message: '401: Unauthorized' },
  notFound: { code: 0, status: 404, message: '404: Not Found' },
  methodNotAllowed: { code: 0, status: 405, message: '405: Method Not Allowed' },
  unknownChannel: { code: 10003, status: 404, message: 'Unknown Channel' },
  unknownGuild: { code: 10004, status: 404, message: 'Unknown Guild' },
  unknownMember: { code: 10007, status: 404, message: 'Unknown Member' },
  unknownMessage: { code: 10008, status: 404, message: 'Unknown Message' },
  unknownRole: { code: 10011, status: 404, message: 'Unknown Role' },
  unknownUser: { code: 10013, status: 404, message: 'Unknown User' },
  unknownEmoji: { code: 10014, status: 400, message: 'Unknown Emoji' },
  unknownInteraction: { code: 10062, status: 404, message: 'Unknown interaction' },
  cannotEditOthers: { code: 50005, status: 403, message: 'Cannot edit a message authored by another user' },
  missingAccess: { code: 50001, status: 403, message: 'Missing Access' },
  missingPermissions: { code: 50013, status: 403, message: 'Missing Permissions' },
  notApplicationOwner: {
    code: 20012,
    status: 403,
    message: 'You are not authorized to perform this action on this application',
  },
  emptyMessage: { code: 50006, status: 400, message: 'Cannot send an empty message' },
  wrongChannelType: { code: 50024, status: 400, message: 'Cannot execute action on this channel type' },
  invalidFormBody: { code: 50035, status: 400, message: 'Invalid Form Body' },
  interactionAcknowledged: {
    code: 40060,
    status: 400,
    message: 'Interaction has already been acknowledged.',
  },
  threadAlreadyCreated: {
    code: 160004,
    status: 400,
    message: 'A thread has already been created for this message',
  },
  threadArchived: { code: 50083, status: 400, message: 'Thread is archived' },
  cannotReplyWithoutHistory: {
    code: 160002,
    status: 403,
    message: 'Cannot reply without permission to read message history',
  },
  entityTooLarge: { code: 40005, status: 413, message: 'Request entity too large' },
  /** Opcodes and Status Codes, JSON Error Codes: 30046. Only ever answered as an injected fault. */
  maxOldMessageEdits: {
    code: 30046,
    status: 400,
    message: 'Maximum number of edits to messages older than 1 hour reached. Try again later',
  },
} as const;

export type DiscordErrorName = keyof typeof DISCORD_ERRORS;

/** Field errors in Discord's nested shape: `{ content: { _errors: [{ code, message }] } }`. */
export type FieldErrors = { [field: string]: FieldErrors | { _errors: { code: string; message: string }[] } };

export class DiscordApiError extends Error {
  readonly code: number;
  readonly status: number;

  constructor(
    readonly kind: DiscordErrorName,
    readonly errors?: FieldErrors,
  ) {
    const spec = DISCORD_ERRORS[kind];
    super(spec.message);
    this.name = 'DiscordApiError';
    this.code = spec.code;
    this.status = spec.status;
  }

  body(): { code: number; message: string; errors?: FieldErrors } {
    return this.errors
      ? { code: this.code, message: this.message, errors: this.errors }
      : { code: this.code, message: this.message };
  }
}

export const fieldError = (path: string[], code: string, message: string): FieldErrors => {
  let node: FieldErrors = { [path[path.length - 1] ?? '_root']: { _errors: [{ code, message }] } };
  for (let i = path.length - 2; i >= 0; i--) node = { [path[i] as string]: node };
  return node;
};

export const invalidForm = (path: string[], code: string, message: string): DiscordApiError =>
  new DiscordApiError('invalidFormBody', fieldError(path, code, message));
