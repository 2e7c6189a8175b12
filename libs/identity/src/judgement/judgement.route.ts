import { z } from 'zod';

/**
 * A pinned judgement route: one model behind one adapter, chosen in configuration and never at run
 * time. The same route shape serves identity ("same root cause?") and readiness ("what does the
 * conversation still lack?"). Only sanitized briefs are ever sent.
 */
const model = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$/, 'not a model name');
const timeoutMs = z
  .number()
  .int()
  .min(100)
  .max(10 * 60_000)
  .default(20_000);

export const judgementRouteSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('openai'),
      name: z.string().min(1).max(100).default('openai'),
      /** An OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1 (Ollama) or a vLLM server. */
      baseUrl: z.string().url(),
      model,
      /** A file holding the API key (read at each call), if the endpoint wants one. */
      apiKeyFile: z.string().min(1).optional(),
      timeoutMs,
    })
    .strict(),
  z
    .object({
      kind: z.literal('claude_code'),
      name: z.string().min(1).max(100).default('claude_code'),
      binary: z.string().min(1).default('claude'),
      model,
      timeoutMs,
    })
    .strict(),
  z
    .object({
      kind: z.literal('codex'),
      name: z.string().min(1).max(100).default('codex'),
      binary: z.string().min(1).default('codex'),
      model,
      timeoutMs,
    })
    .strict(),
]);
export type JudgementRoute = z.infer<typeof judgementRouteSchema>;
export type JudgementRouteInput = z.input<typeof judgementRouteSchema>;

/** `kind:model@name`, the route's identity in events (what answered, never how to reach it). */
export const routeLabel = (r: JudgementRoute): string => `${r.kind}:${r.model}@${r.name}`;
