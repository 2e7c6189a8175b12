import { DiscordAPIError, HTTPError } from 'discord.js';

/** Discord JSON error codes intake reacts to. */
export const DISCORD_CODES = {
  unknownChannel: 10003,
  unknownMessage: 10008,
  unknownMember: 10007,
  unknownUser: 10013,
  unknownEmoji: 10014,
  missingAccess: 50001,
  missingPermissions: 50013,
  invalidFormBody: 50035,
  /**
   * "Thread is archived": to a post, the thread is locked (a post unarchives any other); to an edit
   * or a reaction, the thread is archived, locked or not.
   */
  threadArchived: 50083,
  threadAlreadyCreated: 160004,
  /** "Maximum number of edits to messages older than 1 hour reached. Try again later." */
  maxOldMessageEdits: 30046,
} as const;

/** Gateway close codes that end the session for good, in words an operator can act on. */
export function describeCloseCode(code: number): string {
  switch (code) {
    case 4004:
      return 'the bot token was refused (4004 authentication failed)';
    case 4010:
      return 'invalid shard (4010)';
    case 4011:
      return 'sharding required (4011)';
    case 4012:
      return 'invalid gateway API version (4012)';
    case 4013:
      return 'invalid intents (4013)';
    case 4014:
      return 'the Message Content intent is not enabled for this bot in the Discord developer portal (4014 disallowed intents)';
    default:
      return `the gateway closed with code ${code}`;
  }
}

export interface DiscordFailure {
  /** HTTP status, 0 when no answer came. */
  status: number;
  /** Discord's JSON error code, when it gave one. */
  code: number | null;
  message: string;
}

/** One mapping from whatever the REST client threw to what intake needs to decide. */
export function discordFailure(e: unknown): DiscordFailure {
  if (e instanceof DiscordAPIError) {
    return {
      status: e.status,
      code: typeof e.code === 'number' ? e.code : null,
      message: e.message.slice(0, 300),
    };
  }
  if (e instanceof HTTPError) return { status: e.status, code: null, message: e.message.slice(0, 300) };
  return {
    status: 0,
    code: null,
    message: e instanceof Error ? e.message.slice(0, 300) : String(e).slice(0, 300),
  };
}

export const isDiscordCode = (e: unknown, code: number): boolean =>
  e instanceof DiscordAPIError && e.code === code;
