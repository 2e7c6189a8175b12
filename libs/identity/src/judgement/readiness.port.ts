import { z } from 'zod';
import {
  AnswerFormat,
  answerCandidates,
  askWithin,
  Fallback,
  JudgeHooks,
  ModelAdapter,
  promptHash,
} from './judgement.port';
import { routeLabel } from './judgement.route';

/**
 * Readiness as a model judges it: which of the aspects an engineer needs does the conversation (a
 * report and the reporter's replies in its thread) supply, in whatever words it uses. Privacy
 * scope and owner are not the model's to judge: they come from the privacy scope and the routes.
 */
export const READINESS_ASPECTS = [
  'environment',
  'expected',
  'actual',
  'steps',
  'impact',
  'evidence',
] as const;
export type ReadinessAspect = (typeof READINESS_ASPECTS)[number];

/** What a model is asked. Every text in it is sanitized: private context never leaves. */
export interface ReadinessQuestion {
  /** The sanitized brief of the whole conversation (report and replies, oldest first). */
  conversation: string;
  /** Sanitized names of the files attached anywhere in the conversation. */
  attachments: readonly string[];
}

const aspectFlags = Object.fromEntries(READINESS_ASPECTS.map((a) => [a, z.boolean()])) as Record<
  ReadinessAspect,
  z.ZodBoolean
>;

export const readinessAnswerSchema = z.object({
  supplied: z.object(aspectFlags),
  rationale: z
    .string()
    .default('')
    .transform((s) => s.slice(0, 600)),
});
export type ReadinessAnswer = z.infer<typeof readinessAnswerSchema>;

/** The answer's JSON schema, for endpoints that hold a model to one (strict: every key required). */
export const readinessAnswerFormat: AnswerFormat = {
  name: 'readiness_verdict',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['supplied', 'rationale'],
    properties: {
      supplied: {
        type: 'object',
        additionalProperties: false,
        required: [...READINESS_ASPECTS],
        properties: Object.fromEntries(READINESS_ASPECTS.map((a) => [a, { type: 'boolean' }])),
      },
      rationale: { type: 'string' },
    },
  },
};

/**
 * One readiness judgement as it is recorded (an event): the route, the hash of the exact prompt,
 * what the conversation supplies and what it lacks, and the model's rationale. Audit and replay
 * read this record and never call the model again. `fallback` says there was no usable answer
 * (timeout, error, unusable output) and the offline rules' decision stands; `supplied` and
 * `missing` are then empty.
 */
export interface ReadinessJudgement {
  route: string;
  promptHash: string;
  supplied: ReadinessAspect[];
  missing: ReadinessAspect[];
  rationale: string;
  fallback: Fallback | null;
  durationMs: number;
}

const SYSTEM = [
  'You triage bug reports for a software team.',
  'Read the CONVERSATION (a report and the reporter’s replies in its thread, in any language; private details were replaced by [redacted:…]) and decide, for each aspect, whether the conversation as a whole supplies it:',
  'environment (where it happens: product, app version, browser, OS, device or platform);',
  'expected (what the reporter expected to happen, or that it used to work);',
  'actual (what happens instead);',
  'steps (how to get there or reproduce it);',
  'impact (who is affected and how badly, or what it blocks);',
  'evidence (error text, a log, a screenshot, a recording or an attached file).',
  'An aspect is supplied only when the conversation states it; do not guess.',
  `Answer with one JSON object and nothing else: {"supplied":{${READINESS_ASPECTS.map((a) => `"${a}":true|false`).join(',')}},"rationale":"<one or two sentences>"}.`,
].join(' ');

export function readinessPrompt(q: ReadinessQuestion): string {
  const files = q.attachments.length > 0 ? q.attachments.map((a) => a.slice(0, 200)).join(', ') : 'none';
  return `${SYSTEM}\n\nCONVERSATION:\n${q.conversation.slice(0, 8000)}\n\nATTACHMENTS: ${files.slice(0, 2000)}\n`;
}

/** Finds the answer object in a model's text: bare JSON, fenced, or the last {...} in prose. */
export function parseReadinessAnswer(text: string): ReadinessAnswer | null {
  for (const t of answerCandidates(text)) {
    try {
      const r = readinessAnswerSchema.safeParse(JSON.parse(t));
      if (r.success) return r.data;
    } catch {
      /* next */
    }
  }
  return null;
}

/**
 * Asks the route which aspects the conversation supplies, and always returns a judgement: on a
 * timeout, a failing route or an unusable answer it is a fallback, so the offline rules decide and
 * the record says why.
 */
export async function judgeReadiness(
  adapter: ModelAdapter,
  q: ReadinessQuestion,
  hooks: Omit<JudgeHooks, 'onFallback'> & { onFallback?: (j: ReadinessJudgement) => void } = {},
): Promise<ReadinessJudgement> {
  const prompt = readinessPrompt(q);
  const base = { route: routeLabel(adapter.route), promptHash: promptHash(prompt) };
  const none = { supplied: [], missing: [], rationale: '' };
  const asked = await askWithin(adapter, prompt, hooks.now ?? Date.now, readinessAnswerFormat);
  let out: ReadinessJudgement;
  if ('fallback' in asked) out = { ...base, ...none, ...asked };
  else {
    const a = parseReadinessAnswer(asked.text);
    out = a
      ? {
          ...base,
          supplied: READINESS_ASPECTS.filter((x) => a.supplied[x]),
          missing: READINESS_ASPECTS.filter((x) => !a.supplied[x]),
          rationale: a.rationale,
          fallback: null,
          durationMs: asked.durationMs,
        }
      : {
          ...base,
          ...none,
          fallback: {
            reason: 'invalid_answer',
            detail: `no readiness answer object in ${asked.text.length} characters`,
          },
          durationMs: asked.durationMs,
        };
  }
  if (out.fallback) hooks.onFallback?.(out);
  return out;
}
