import { createHash } from 'node:crypto';
import { z } from 'zod';
import { JudgementRoute, routeLabel } from './judgement.route';

/** What a model is asked. Every text in it is a sanitized brief: private context never leaves. */
export interface SameCauseQuestion {
  report: string;
  candidates: ReadonlyArray<{ caseId: string; brief: string }>;
}

export const sameCauseAnswerSchema = z.object({
  verdict: z.enum(['same', 'different', 'unsure']),
  /** The candidate with the same root cause, when verdict is `same`. */
  caseId: z.string().max(200).nullable().default(null),
  rationale: z.string().max(600).default(''),
});
export type SameCauseAnswer = z.infer<typeof sameCauseAnswerSchema>;

/**
 * One judgement as it is recorded (an event): which route answered, the hash of the exact prompt,
 * the verdict and its rationale. Audit and replay read this record and never call the model again.
 * `fallback` says the model did not answer (timeout, error, unusable output) and the offline
 * matcher's decision stands.
 */
export interface Judgement {
  route: string;
  promptHash: string;
  verdict: SameCauseAnswer['verdict'];
  caseId: string | null;
  rationale: string;
  fallback: null | { reason: 'timeout' | 'error' | 'invalid_answer'; detail: string };
  durationMs: number;
}

/**
 * The shape an answer must have, as a JSON schema: an endpoint that supports structured output
 * is held to it (the prompt states it too, for those that do not).
 */
export interface AnswerFormat {
  name: string;
  schema: Record<string, unknown>;
}

/** A transport to one model: prompt in, the model's raw text out. Throws on failure. */
export interface ModelAdapter {
  readonly route: JudgementRoute;
  complete(prompt: string, signal: AbortSignal, format?: AnswerFormat): Promise<string>;
}

export class JudgementTimeout extends Error {
  readonly code = 'JUDGEMENT_TIMEOUT';
}

const SYSTEM = [
  'You triage bug reports for a software team.',
  'Decide whether the NEW report has the same root cause as one of the CANDIDATE cases (the same defect, not merely the same area or symptom).',
  'Different versions, error codes or platforms usually mean a different cause unless the text says otherwise.',
  'Answer with one JSON object and nothing else: {"verdict":"same"|"different"|"unsure","caseId":<candidate id or null>,"rationale":"<one or two sentences>"}.',
].join(' ');

export function sameCausePrompt(q: SameCauseQuestion): string {
  const cands = q.candidates.map((c) => `CANDIDATE ${c.caseId}:\n${c.brief.slice(0, 2000)}`).join('\n\n');
  return `${SYSTEM}\n\nNEW report:\n${q.report.slice(0, 2000)}\n\n${cands}\n`;
}

export const promptHash = (prompt: string): string =>
  `sha256:${createHash('sha256').update(prompt).digest('hex')}`;

/** Where an answer object may be in a model's text: bare JSON, fenced, or the last {...} in prose. */
export function answerCandidates(text: string): string[] {
  const tries: string[] = [text.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fenced) tries.push((fenced[1] as string).trim());
  const start = text.lastIndexOf('{');
  if (start >= 0) {
    const end = text.indexOf('}', start);
    if (end > start) tries.push(text.slice(start, end + 1));
    const first = text.indexOf('{');
    const last = text.lastIndexOf('}');
    if (first >= 0 && last > first) tries.push(text.slice(first, last + 1));
  }
  return tries;
}

/** Finds the answer object in a model's text: bare JSON, fenced, or the last {...} in prose. */
export function parseAnswer(text: string, candidateIds: ReadonlySet<string>): SameCauseAnswer | null {
  for (const t of answerCandidates(text)) {
    try {
      const r = sameCauseAnswerSchema.safeParse(JSON.parse(t));
      if (!r.success) continue;
      const a = r.data;
      // A `same` that names no candidate (or an unknown one) is not usable: treat it as unsure.
      if (a.verdict === 'same' && (!a.caseId || !candidateIds.has(a.caseId)))
        return { ...a, verdict: 'unsure', caseId: null };
      if (a.verdict !== 'same') return { ...a, caseId: null };
      return a;
    } catch {
      /* next */
    }
  }
  return null;
}

export interface JudgeHooks {
  /** Called once per fallback (a metric, a log line): falling back is never silent. */
  onFallback?: (j: Judgement) => void;
  now?: () => number;
}

/**
 * Asks the route "same root cause?" and always returns a Judgement: on a timeout, a failing
 * endpoint or an unusable answer it is a fallback (`verdict: 'unsure'`, `fallback` set), so the
 * offline decision stands and the record says why.
 */
export async function judgeSameCause(
  adapter: ModelAdapter,
  q: SameCauseQuestion,
  hooks: JudgeHooks = {},
): Promise<Judgement> {
  const prompt = sameCausePrompt(q);
  const base = { route: routeLabel(adapter.route), promptHash: promptHash(prompt) };
  const asked = await askWithin(adapter, prompt, hooks.now ?? Date.now);
  let out: Judgement;
  if ('fallback' in asked) {
    out = { ...base, verdict: 'unsure', caseId: null, rationale: '', ...asked };
  } else {
    const a = parseAnswer(asked.text, new Set(q.candidates.map((c) => c.caseId)));
    out = a
      ? { ...base, ...a, fallback: null, durationMs: asked.durationMs }
      : {
          ...base,
          verdict: 'unsure',
          caseId: null,
          rationale: '',
          fallback: {
            reason: 'invalid_answer',
            detail: `no answer object in ${asked.text.length} characters`,
          },
          durationMs: asked.durationMs,
        };
  }
  if (out.fallback) hooks.onFallback?.(out);
  return out;
}

export type Fallback = NonNullable<Judgement['fallback']>;

/**
 * One call to a route within its timeout: the model's text, or why there is none (a timeout, or
 * an error: a failing endpoint, a CLI that exited badly). Never throws.
 */
export async function askWithin(
  adapter: ModelAdapter,
  prompt: string,
  now: () => number = Date.now,
  format?: AnswerFormat,
): Promise<{ text: string; durationMs: number } | { fallback: Fallback; durationMs: number }> {
  const t0 = now();
  const ac = new AbortController();
  const timer = setTimeout(
    () => ac.abort(new JudgementTimeout(`no answer in ${adapter.route.timeoutMs} ms`)),
    adapter.route.timeoutMs,
  );
  try {
    const text = await Promise.race([
      format ? adapter.complete(prompt, ac.signal, format) : adapter.complete(prompt, ac.signal),
      new Promise<never>((_, reject) =>
        ac.signal.addEventListener('abort', () => reject(ac.signal.reason as Error), { once: true }),
      ),
    ]);
    return { text, durationMs: now() - t0 };
  } catch (e) {
    const timeout = e instanceof JudgementTimeout || ac.signal.aborted;
    return {
      fallback: {
        reason: timeout ? 'timeout' : 'error',
        detail: String((e as Error).message ?? e).slice(0, 300),
      },
      durationMs: now() - t0,
    };
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}
