import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { z } from 'zod';
import { ParsedReviewerCommand } from './reviewer-command.decider';

const snowflake = z.string().regex(/^\d{1,25}$/);
const option = z.object({
  name: z.string(),
  type: z.number().int(),
  value: z.union([z.string(), z.number(), z.boolean()]).optional(),
});

/** An application-command interaction as intake reads it (INTERACTION_CREATE, type 2). */
export const slashInteractionSchema = z.object({
  id: snowflake,
  token: z.string().min(1),
  type: z.literal(2),
  guild_id: snowflake.optional(),
  channel_id: snowflake,
  member: z.object({ user: z.object({ id: snowflake, bot: z.boolean().optional() }) }),
  data: z.object({
    name: z.string(),
    options: z.array(option.extend({ options: z.array(option).optional() })).optional(),
  }),
});
export type SlashInteraction = z.infer<typeof slashInteractionSchema>;

/** The one command intake answers: `/caseloop <subcommand> [option]`. */
export const SLASH_COMMAND = 'caseloop';

const { Subcommand, String: Text } = ApplicationCommandOptionType;
/** The same bounds the parser applies to free text (it keeps 4000 characters). */
const FREE_TEXT = { type: Text, min_length: 1, max_length: 4000 } as const;
const REVIEW_ID = {
  type: Text,
  name: 'review',
  description: 'The review id from the link-review question',
  required: true,
  min_length: 1,
  max_length: 128,
} as const;

/**
 * `/caseloop` as intake registers it in each bound guild: every subcommand and option parseSlash
 * reads, with the names it reads them by (a unit test keeps the two in agreement).
 */
export const CASELOOP_COMMAND: RESTPostAPIChatInputApplicationCommandsJSONBody = {
  type: ApplicationCommandType.ChatInput,
  name: SLASH_COMMAND,
  description: 'Decide on the case in this thread (reviewers only)',
  options: [
    { type: Subcommand, name: 'approve', description: 'Approve the result of this case' },
    {
      type: Subcommand,
      name: 'revise',
      description: 'Ask for a revision',
      options: [{ ...FREE_TEXT, name: 'text', description: 'What to change', required: true }],
    },
    {
      type: Subcommand,
      name: 'reject',
      description: 'Reject this case',
      options: [{ ...FREE_TEXT, name: 'reason', description: 'Why it is rejected', required: true }],
    },
    {
      type: Subcommand,
      name: 'actionable',
      description: 'Turn this product feedback into engineering work',
      options: [{ ...FREE_TEXT, name: 'note', description: 'A note for the engineers', required: false }],
    },
    {
      type: Subcommand,
      name: 'same',
      description: 'Settle a link review: the report belongs to this case',
      options: [REVIEW_ID],
    },
    {
      type: Subcommand,
      name: 'different',
      description: 'Settle a link review: the report is a different case',
      options: [REVIEW_ID],
    },
    {
      type: Subcommand,
      name: 'privacy-ok',
      description: 'Clear an artifact held for privacy review',
      options: [
        {
          type: Text,
          name: 'sha256',
          description: 'The sha-256 of the artifact',
          required: true,
          min_length: 64,
          max_length: 64,
        },
      ],
    },
  ],
};

/** Everything intake registers (a bulk overwrite: commands not listed here are removed). */
export const APPLICATION_COMMANDS: readonly RESTPostAPIChatInputApplicationCommandsJSONBody[] = [
  CASELOOP_COMMAND,
];

/**
 * `/caseloop approve`, `/caseloop revise text:…`, `/caseloop reject reason:…`, `/caseloop actionable [note:…]`,
 * `/caseloop same review:…`, `/caseloop different review:…`, `/caseloop privacy-ok sha256:…` — the same
 * commands as plain text, so they go through the same decider. Null: not ours.
 */
export function parseSlash(data: SlashInteraction['data']): ParsedReviewerCommand | null {
  if (data.name !== SLASH_COMMAND) return null;
  const sub = data.options?.[0];
  if (!sub || sub.type !== 1) return null;
  const opt = (name: string): string => {
    const v = sub.options?.find((o) => o.name === name)?.value;
    return v === undefined ? '' : String(v).trim();
  };
  switch (sub.name) {
    case 'approve':
      return { status: 'command', command: { kind: 'approve' } };
    case 'revise':
      return opt('text')
        ? { status: 'command', command: { kind: 'revise', text: opt('text').slice(0, 4000) } }
        : { status: 'malformed', name: 'revise', problem: 'text is required' };
    case 'reject':
      return opt('reason')
        ? { status: 'command', command: { kind: 'reject', reason: opt('reason').slice(0, 4000) } }
        : { status: 'malformed', name: 'reject', problem: 'reason is required' };
    case 'actionable':
      return {
        status: 'command',
        command: { kind: 'actionable', note: opt('note') ? opt('note').slice(0, 4000) : null },
      };
    case 'same':
    case 'different': {
      const review = opt('review');
      return /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(review)
        ? { status: 'command', command: { kind: sub.name, reviewId: review } }
        : { status: 'malformed', name: sub.name, problem: 'review must be a review id' };
    }
    case 'privacy-ok': {
      const sha = opt('sha256').toLowerCase();
      return /^[0-9a-f]{64}$/.test(sha)
        ? { status: 'command', command: { kind: 'privacy-ok', sha256: sha } }
        : { status: 'malformed', name: 'privacy-ok', problem: 'sha256 must be a sha-256 hex digest' };
    }
    default:
      return { status: 'malformed', name: 'approve', problem: `unknown subcommand ${sub.name.slice(0, 32)}` };
  }
}
