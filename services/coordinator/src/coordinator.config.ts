import { defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';

const ratio = z.coerce.number().min(0).max(1);

/** The one place the coordinator service reads its environment (see docker-compose.yml for every key). */
export const coordinatorConfigSchema = z.object({
  ...platformConfigShape,
  /** The target repositories file shared with worker and evidence (ids, target branches, configured checks). */
  COORDINATOR_REPOSITORIES_FILE: z.string().min(1).optional(),
  /** YAML: `channels: [{channelId, repository, owner?}]`, `owners: {<repository>: <owner>}` — who owns reports from a channel. */
  COORDINATOR_ROUTES_FILE: z.string().min(1).optional(),
  /** YAML of the identity matcher's settings (thresholds, weights, product areas, synonyms). */
  COORDINATOR_IDENTITY_FILE: z.string().min(1).optional(),
  /**
   * YAML of a pinned judgement route for the identity review band (`kind: openai | claude_code |
   * codex`, `model`, `baseUrl`, `apiKeyFile`, `timeoutMs`; libs/identity judgement.route.ts). Unset:
   * offline only. The API key is read from `apiKeyFile`, never from this file or the environment.
   */
  COORDINATOR_JUDGEMENT_FILE: z.string().min(1).optional(),
  /**
   * YAML of a pinned judgement route for readiness, same format as COORDINATOR_JUDGEMENT_FILE: asked,
   * with the sanitized brief of the conversation and attachment names only, which of environment,
   * expected, actual, steps, impact and evidence the conversation supplies. Unset: the offline
   * readiness rules alone.
   */
  COORDINATOR_READINESS_JUDGEMENT_FILE: z.string().min(1).optional(),
  COORDINATOR_LINK_THRESHOLD: ratio.optional(),
  COORDINATOR_REVIEW_THRESHOLD: ratio.optional(),
  /**
   * The routing consumer's ack wait: a replica lost while routing a report holds every later report
   * this long, so it is short. A routing still running is kept alive (up to CONSUMER_ACK_WAIT_MS).
   */
  COORDINATOR_ROUTING_ACK_WAIT_MS: z.coerce.number().int().min(1000).default(5_000),
  /** Scheduling clock; 0 turns it off. */
  COORDINATOR_CLOCK_INTERVAL_MS: z.coerce.number().int().min(0).default(3_600_000),
  COORDINATOR_MAX_QUESTIONS: z.coerce.number().int().min(1).max(10).default(3),
  /** The clock resumes an active task whose worker has been silent this long (a worker restart lost it). */
  COORDINATOR_TASK_IDLE_MS: z.coerce
    .number()
    .int()
    .min(60_000)
    .default(2 * 60 * 60 * 1000),
  /** Comma-separated words that, followed by a colon, mark private text in a report. */
  COORDINATOR_PRIVATE_MARKERS: z.string().min(1).optional(),
  /** Optional embeddings signal: an OpenAI-compatible base URL; the key is read from a file. */
  COORDINATOR_EMBEDDINGS_URL: z.url().optional(),
  COORDINATOR_EMBEDDINGS_MODEL: z.string().min(1).default('text-embedding-3-small'),
  COORDINATOR_EMBEDDINGS_KEY_FILE: z.string().min(1).optional(),
  COORDINATOR_EMBEDDINGS_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
});
export type CoordinatorConfig = z.infer<typeof coordinatorConfigSchema>;

export const coordinatorConfig = defineConfig({
  schema: coordinatorConfigSchema,
  secrets: [...platformSecrets],
});
