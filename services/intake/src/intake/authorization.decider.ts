import type { Binding, ChannelMode } from '../binding/binding.schema';
import type { InboundMessage } from './inbound-message';

/** Mirrors `SourceDropped.reason` in the contracts. */
export type DropReason =
  | 'wrong_guild'
  | 'channel_not_bound'
  | 'author_is_bot'
  | 'author_is_webhook'
  | 'author_is_self'
  | 'author_not_listed'
  | 'not_mentioned'
  | 'oversized'
  | 'daily_ceiling'
  | 'empty'
  | 'system_message';

/** Discord message types that a person writes: DEFAULT (0) and REPLY (19). Everything else is a system message. */
const PERSON_MESSAGE_TYPES: ReadonlySet<number> = new Set([0, 19]);

/**
 * Whether a person wrote the message's words. A system message can carry a person's id and words
 * of their choosing (a thread renamed "approve" posts CHANNEL_NAME_CHANGE with that content): it is
 * never a report, a reply or a command.
 */
export const writtenByPerson = (m: Pick<InboundMessage, 'type' | 'authorIsSystem'>): boolean =>
  !m.authorIsSystem && PERSON_MESSAGE_TYPES.has(m.type);

export interface AuthorizationContext {
  binding: Binding;
  selfId: string;
  /** The guild of the message's channel (from the payload or the channel). */
  guildId: string | null;
  /** The bound channel to check: the channel itself, or a thread's parent. */
  boundChannelId: string;
  /** Set when the message is in a thread. */
  threadId: string | null;
  /** A thread the outbox opened (or posted in) for a case: replies there need no mention and do not count as new reports. */
  inCaseThread: boolean;
  /** The author's roles in the guild; empty when unknown. */
  authorRoles: readonly string[];
  /** Reports this author already made in the message's UTC day. */
  reportsToday: number;
}

export type Authorization =
  | { verdict: 'accept'; authorIsReviewer: boolean; mentionedBot: boolean; countsAsReport: boolean }
  | { verdict: 'drop'; reason: DropReason };

const drop = (reason: DropReason): Authorization => ({ verdict: 'drop', reason });

/**
 * Decides whether one message becomes a source. Pure: every fact it needs arrives in `ctx`.
 * The order matters: who/where is checked before what, so a stranger's oversized message is
 * recorded as `author_not_listed`, and only listed reporters ever get a reply line.
 */
export function authorize(m: InboundMessage, ctx: AuthorizationContext): Authorization {
  const b = ctx.binding;
  if (ctx.guildId !== b.guildId) return drop('wrong_guild');
  if (!writtenByPerson(m)) return drop('system_message');
  if (m.webhookId) return drop('author_is_webhook');
  if (m.authorId === ctx.selfId) return drop('author_is_self');
  if (m.authorIsBot) return drop('author_is_bot');
  const mode: ChannelMode | undefined = b.channels.find((c) => c.id === ctx.boundChannelId)?.mode;
  if (!mode) return drop('channel_not_bound');
  const authorIsReviewer = b.reviewers.includes(m.authorId);
  const listed =
    authorIsReviewer ||
    b.reporters.includes(m.authorId) ||
    ctx.authorRoles.some((r) => b.reporterRoles.includes(r));
  if (!listed) return drop('author_not_listed');
  const mentionedBot =
    m.mentionIds.includes(ctx.selfId) ||
    m.content.includes(`<@${ctx.selfId}>`) ||
    m.content.includes(`<@!${ctx.selfId}>`);
  if (mode === 'mention' && !mentionedBot && !ctx.inCaseThread) return drop('not_mentioned');
  if (stripMention(m.content, ctx.selfId).trim() === '' && m.attachments.length === 0) return drop('empty');
  if (m.content.length > b.limits.inboundMaxChars) return drop('oversized');
  const countsAsReport = !ctx.inCaseThread;
  if (countsAsReport && ctx.reportsToday >= b.limits.reportsPerDayPerUser) return drop('daily_ceiling');
  return { verdict: 'accept', authorIsReviewer, mentionedBot, countsAsReport };
}

export const stripMention = (content: string, selfId: string): string =>
  content.split(`<@${selfId}>`).join('').split(`<@!${selfId}>`).join('');

/** The one fixed line a listed reporter gets for a refused message; other drops stay silent. */
export function dropNotice(reason: DropReason, b: Binding): string | null {
  switch (reason) {
    case 'oversized':
      return `This message is longer than ${b.limits.inboundMaxChars} characters, so it was not recorded. Please shorten it or attach the details as a file.`;
    case 'daily_ceiling':
      return `You reached today's limit of ${b.limits.reportsPerDayPerUser} reports; further reports are not recorded until 00:00 UTC.`;
    case 'wrong_guild':
    case 'channel_not_bound':
    case 'author_is_bot':
    case 'author_is_webhook':
    case 'author_is_self':
    case 'author_not_listed':
    case 'not_mentioned':
    case 'empty':
    case 'system_message':
      return null;
  }
}

/** `YYYY-MM-DD` of an ISO time, in UTC: the daily ceiling's day. */
export const utcDay = (iso: string): string => iso.slice(0, 10);
