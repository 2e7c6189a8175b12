import { z } from 'zod';
import { DEFAULT_AREAS } from './signatures';
import { DEFAULT_SYNONYMS } from './text';

/**
 * Fitted on the corpus tuning split (`npm run eval:identity:fit`, L2 0.003, chosen by leave-one-
 * channel-out cross-validation; eval/README.md); the held-out split never informed them.
 * Recency is held at 1 rather than fitted: the corpus channels are sparse in time, so a free fit
 * leans on it. It counts only by how much a case stands out from the other open cases in time
 * (nothing on a busy channel, where every case is recent), and never towards an automatic link.
 * Further signals were cross-validated and not kept (the best candidate's text margin over the
 * runner-up, first-sentence similarity, BM25, word pairs, negation marks: eval/README.md); the margin
 * serves the link gate (`linkGate`) instead.
 */
export const DEFAULT_MODEL = {
  bias: -2.71,
  word: 2.34,
  gram: 2.58,
  sense: 1.6,
  embedding: 3,
  strong: 0.53,
  statusShared: 0.51,
  versionShared: 1.23,
  release: 1.45,
  areaShared: 1.12,
  platformShared: 0.19,
  versionConflict: -0.92,
  codeConflict: -0.14,
  areaConflict: -0.34,
  platformConflict: -0.54,
  recency: 1,
} as const;

/**
 * Every knob of the matcher. Thresholds and weights are configuration so an operator can tune
 * them on their own channel's history with `caseloop identity replay`; the defaults were chosen
 * on the labelled set in libs/identity/eval (see eval/README.md for the figures).
 */
export const identityConfigSchema = z.object({
  linkThreshold: z.number().min(0).max(1).default(0.7),
  reviewThreshold: z.number().min(0).max(1).default(0.34),
  /**
   * With a judgement route configured, the route is asked about every report whose best open case
   * scores at least this (below the review threshold too: paraphrases the offline matcher scores low
   * reach a model). A model's "same" lifts the offline decision one step at most: below the review
   * band to a review, in it to a link; "different" lowers it one step. Above the review threshold
   * it counts as the review threshold.
   */
  judgementAskFloor: z.number().min(0).max(1).default(0.15),
  /** Share of the text score taken by word TF-IDF cosine; the rest is character-trigram cosine. */
  wordWeight: z.number().min(0).max(1).default(0.55),
  /** Share of the text score taken by the embeddings cosine when both sides have a vector. */
  embeddingWeight: z.number().min(0).max(1).default(0.5),
  /**
   * Shared metadata (release, version, area, platform, status) counts in full only beside text
   * similarity of at least `full` or a shared technical signature, not at all at or below `floor`.
   * Chosen on the tuning split (floor 0.1, full 0.25: link precision 10/10, recall 0.574, load 0.18).
   */
  corroboration: z
    .object({ floor: z.number().min(0).max(1).default(0.1), full: z.number().min(0).max(1).default(0.25) })
    .default({ floor: 0.1, full: 0.25 }),
  /**
   * An automatic link needs a second, independent signal beside its score: a shared technical
   * signature, HTTP status or exact release, or a text score at least `margin` above every other
   * candidate's (one clear match, not one of several alike). A shared area or major.minor version
   * does not count: many bugs of one product share them. Otherwise the report is at most held for
   * review. `margin: 1` asks for a shared signal always; chosen on the tuning split (eval/README.md).
   */
  linkGate: z.object({ margin: z.number().min(0).max(1).default(0.2) }).default({ margin: 0.2 }),
  maxCandidates: z.number().int().min(1).max(500).default(40),
  /** Terms in more than this share of a large index (over 200 cases) do not generate candidates. */
  rankingDfCap: z.number().min(0).max(1).default(0.1),
  /**
   * Weights of the logistic model over the matcher's signals (see FEATURES in identity-index.ts),
   * fitted on the tuning split of libs/identity/eval/corpus (`npm run eval:identity -- --fit`).
   * A zero weight switches a signal off; `sense: 0` also skips loading the lexical database.
   */
  model: z
    .object(
      Object.fromEntries(Object.entries(DEFAULT_MODEL).map(([k, v]) => [k, z.number().default(v)])) as {
        [K in keyof typeof DEFAULT_MODEL]: z.ZodDefault<z.ZodNumber>;
      },
    )
    .default(DEFAULT_MODEL),
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
