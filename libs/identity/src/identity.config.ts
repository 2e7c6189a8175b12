import { z } from 'zod';
import { DEFAULT_AREAS } from './signatures';
import { DEFAULT_SYNONYMS } from './text';

/**
 * Every knob of the matcher. Thresholds and weights are configuration so an operator can tune
 * them on their own channel's history with `caseloop identity replay`; the defaults were chosen
 * on the labelled set in libs/identity/eval (see eval/README.md for the figures).
 */
export const identityConfigSchema = z.object({
  linkThreshold: z.number().min(0).max(1).default(0.45),
  reviewThreshold: z.number().min(0).max(1).default(0.25),
  /** Share of the text score taken by word TF-IDF cosine; the rest is character-trigram cosine. */
  wordWeight: z.number().min(0).max(1).default(0.55),
  /** Share of the text score taken by the embeddings cosine when both sides have a vector. */
  embeddingWeight: z.number().min(0).max(1).default(0.5),
  maxCandidates: z.number().int().min(1).max(500).default(40),
  /** Terms in more than this share of a large index (over 200 cases) do not generate candidates. */
  rankingDfCap: z.number().min(0).max(1).default(0.1),
  bonus: z
    .object({
      exception: z.number().default(0.12),
      error_code: z.number().default(0.18),
      http_status: z.number().default(0.06),
      frame: z.number().default(0.2),
      quoted: z.number().default(0.2),
      url: z.number().default(0.08),
      path: z.number().default(0.08),
      area: z.number().default(0.04),
      version: z.number().default(0.04),
      platform: z.number().default(0.02),
      cap: z.number().default(0.35),
    })
    .default({
      exception: 0.12,
      error_code: 0.18,
      http_status: 0.06,
      frame: 0.2,
      quoted: 0.2,
      url: 0.08,
      path: 0.08,
      area: 0.04,
      version: 0.04,
      platform: 0.02,
      cap: 0.35,
    }),
  penalty: z
    .object({
      version: z.number().default(0.3),
      error_code: z.number().default(0.3),
      exception: z.number().default(0.25),
      http_status: z.number().default(0.2),
      frame: z.number().default(0.05),
      area: z.number().default(0.15),
      platform: z.number().default(0.04),
    })
    .default({
      version: 0.3,
      error_code: 0.3,
      exception: 0.25,
      http_status: 0.2,
      frame: 0.05,
      area: 0.15,
      platform: 0.04,
    }),
  areas: z.record(z.string(), z.array(z.string().min(1))).default(DEFAULT_AREAS as Record<string, string[]>),
  synonyms: z
    .record(z.string(), z.array(z.string().min(1)))
    .default(DEFAULT_SYNONYMS as Record<string, string[]>),
});

export type IdentityConfig = z.infer<typeof identityConfigSchema>;
export type IdentityConfigInput = z.input<typeof identityConfigSchema>;

export const identityConfig = (input: IdentityConfigInput = {}): IdentityConfig => {
  const c = identityConfigSchema.parse(input);
  if (c.reviewThreshold > c.linkThreshold)
    throw new RangeError('identity reviewThreshold must not exceed linkThreshold');
  return c;
};
