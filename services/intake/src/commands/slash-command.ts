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
