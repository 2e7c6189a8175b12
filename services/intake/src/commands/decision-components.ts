import { z } from 'zod';
import { ParsedReviewerCommand } from './reviewer-command.decider';

/**
 * Discord-native decisions: buttons on the receipt (Approve, Request changes, Reject) and on a link
 * review (Same case, Different), and the modal that asks for the text of a revision or a rejection.
 * The custom ids carry what the click means; the case is the thread's. Pure, no I/O.
 */

const PREFIX = 'caseloop';
const SAFE_REF = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/** Discord's limit on a component's custom_id. */
const CUSTOM_ID_MAX = 100;
/** The text input a revise or reject modal asks for. */
export const MODAL_TEXT_INPUT = 'text';

const ButtonStyle = { Primary: 1, Secondary: 2, Success: 3, Danger: 4 } as const;
const TEXT_INPUT_PARAGRAPH = 2;

export type ButtonAction = 'approve' | 'revise' | 'reject' | 'same' | 'different';
export type ModalAction = 'revise' | 'reject';

export interface ActionRow {
  type: 1;
  components: { type: 2; style: number; custom_id: string; label: string }[];
}

/** `caseloop:<action>[:<ref>]`, the ref left out when it would not fit Discord's 100 characters. */
const customId = (action: string, ref: string | null): string => {
  const full = ref ? `${PREFIX}:${action}:${ref}` : `${PREFIX}:${action}`;
  return full.length <= CUSTOM_ID_MAX ? full : `${PREFIX}:${action}`;
};

/** The receipt's decision row; `receiptId` names the receipt the click was made on. */
export function receiptButtons(receiptId: string | null): ActionRow[] {
  return [
    {
      type: 1,
      components: [
        { type: 2, style: ButtonStyle.Success, custom_id: customId('approve', receiptId), label: 'Approve' },
        {
          type: 2,
          style: ButtonStyle.Secondary,
          custom_id: customId('revise', receiptId),
          label: 'Request changes',
        },
        { type: 2, style: ButtonStyle.Danger, custom_id: customId('reject', receiptId), label: 'Reject' },
      ],
    },
  ];
}

/** A link review's row: the review id is the reference (it is what `same <id>` names). */
export function linkReviewButtons(reviewId: string): ActionRow[] {
  return [
    {
      type: 1,
      components: [
        { type: 2, style: ButtonStyle.Primary, custom_id: customId('same', reviewId), label: 'Same case' },
        {
          type: 2,
          style: ButtonStyle.Secondary,
          custom_id: customId('different', reviewId),
          label: 'Different',
        },
      ],
    },
  ];
}

/** The modal a Request changes or Reject click opens. */
export function decisionModal(action: ModalAction, ref: string | null) {
  return {
    custom_id: customId(`${action}-text`, ref),
    title: action === 'revise' ? 'Request changes' : 'Reject this case',
    components: [
      {
        type: 1,
        components: [
          {
            type: 4,
            custom_id: MODAL_TEXT_INPUT,
            label: action === 'revise' ? 'What should change?' : 'Why is it rejected?',
            style: TEXT_INPUT_PARAGRAPH,
            min_length: 1,
            max_length: 4000,
            required: true,
          },
        ],
      },
    ],
  };
}

export type ParsedClick =
  | { kind: 'decide'; command: ParsedReviewerCommand }
  | { kind: 'ask'; action: ModalAction; ref: string | null };

/** A button's custom id → what it asks for; null when it is not one of ours. */
export function parseButton(id: string): ParsedClick | null {
  const [prefix, action, ref, ...rest] = id.split(':');
  if (prefix !== PREFIX || rest.length > 0) return null;
  if (ref !== undefined && !SAFE_REF.test(ref)) return null;
  switch (action) {
    case 'approve':
      return { kind: 'decide', command: { status: 'command', command: { kind: 'approve' } } };
    case 'revise':
    case 'reject':
      return { kind: 'ask', action, ref: ref ?? null };
    case 'same':
    case 'different':
      return ref
        ? { kind: 'decide', command: { status: 'command', command: { kind: action, reviewId: ref } } }
        : null;
    default:
      return null;
  }
}

/** A submitted modal → the command it records; null when it is not one of ours. */
export function parseModal(id: string, text: string): ParsedReviewerCommand | null {
  const [prefix, action, ref, ...rest] = id.split(':');
  if (prefix !== PREFIX || rest.length > 0 || (ref !== undefined && !SAFE_REF.test(ref))) return null;
  const value = text.trim().slice(0, 4000);
  switch (action) {
    case 'revise-text':
      return value
        ? { status: 'command', command: { kind: 'revise', text: value } }
        : { status: 'malformed', name: 'revise', problem: 'text is required' };
    case 'reject-text':
      return value
        ? { status: 'command', command: { kind: 'reject', reason: value } }
        : { status: 'malformed', name: 'reject', problem: 'reason is required' };
    default:
      return null;
  }
}

const snowflake = z.string().regex(/^\d{1,25}$/);
const member = z.object({ user: z.object({ id: snowflake, bot: z.boolean().optional() }) });

/** A button click (INTERACTION_CREATE type 3) as intake reads it. */
export const componentInteractionSchema = z.object({
  id: snowflake,
  token: z.string().min(1),
  type: z.literal(3),
  guild_id: snowflake.optional(),
  channel_id: snowflake,
  member,
  message: z.object({ id: snowflake }),
  data: z.object({ custom_id: z.string().max(100), component_type: z.number().int() }),
});
export type ComponentInteraction = z.infer<typeof componentInteractionSchema>;

/** A modal submission (INTERACTION_CREATE type 5) as intake reads it. */
export const modalInteractionSchema = z.object({
  id: snowflake,
  token: z.string().min(1),
  type: z.literal(5),
  guild_id: snowflake.optional(),
  channel_id: snowflake,
  member,
  data: z.object({
    custom_id: z.string().max(100),
    components: z.array(
      z.object({
        components: z.array(z.object({ custom_id: z.string(), value: z.string().max(4000).optional() })),
      }),
    ),
  }),
});
export type ModalInteraction = z.infer<typeof modalInteractionSchema>;

/** The value of one text input of a submitted modal ('' when absent). */
export const modalValue = (i: ModalInteraction, inputId: string): string =>
  i.data.components.flatMap((row) => row.components).find((c) => c.custom_id === inputId)?.value ?? '';
