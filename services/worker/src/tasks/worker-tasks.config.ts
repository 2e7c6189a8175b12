import { z } from 'zod';

/**
 * The worker's own keys (defaults match the container layout: config mounted at /etc/caseloop,
 * state under /var/lib/caseloop) (merged into its one config schema with the platform's). The GitHub token
 * is a secret: `WORKER_GITHUB_TOKEN_FILE` in production, never logged, never given to a runtime.
 * Repository credentials are files named in the repositories file, read only by git's askpass helper.
 */
export const workerTasksConfigShape = {
  /** Target repositories (YAML or JSON, see @caseloop/target-repositories); the evidence service reads the same file. */
  WORKER_REPOSITORIES_FILE: z.string().min(1).default('/etc/caseloop/repositories.yaml'),
  /** The pinned routes: normal, escalation, maxAttempts (see runtimes/route.config.ts). */
  WORKER_ROUTES_FILE: z.string().min(1).default('/etc/caseloop/routes.yaml'),
  /** Holds `mirrors/`, `worktrees/`, `runs/`, `askpass/`, `cache/`: the worker's own; no other service reads it. */
  WORKER_DIR: z.string().min(1).default('/var/lib/caseloop'),
  /** A cap on each check's stored log (first and last halves beyond it): only a runaway output reaches it. */
  WORKER_CHECK_OUTPUT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(32 * 1024 * 1024),
  /**
   * The check-log bucket: every check's whole redacted log goes to `checks/<caseId>/<revision>/<sha256>.log`
   * there, where the evidence service reads it (EVIDENCE_CHECK_LOG_BUCKET, by default its own bucket).
   */
  WORKER_S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/),
  /** Null for AWS itself; MinIO's URL in the compose deployment. */
  WORKER_S3_ENDPOINT: z.url().optional(),
  WORKER_S3_REGION: z.string().min(1).default('us-east-1'),
  WORKER_S3_FORCE_PATH_STYLE: z
    .enum(['true', 'false', '1', '0'])
    .transform((v) => v === 'true' || v === '1')
    .default(true),
  WORKER_S3_ACCESS_KEY_ID: z.string().min(1),
  WORKER_S3_SECRET_ACCESS_KEY: z.string().min(1),
  /** Create the bucket on boot (sandbox); production buckets are provisioned by deployment. */
  WORKER_S3_CREATE_BUCKET: z
    .enum(['true', 'false', '1', '0'])
    .transform((v) => v === 'true' || v === '1')
    .default(false),
  /** Grace between SIGTERM and SIGKILL of a timed-out process group. */
  WORKER_KILL_GRACE_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  WORKER_GIT_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(300_000),
  /**
   * A git lock file (`index.lock`, a ref's `.lock`) in the worker's own mirrors or worktrees left
   * untouched this long was left by a git that died (a killed worker, a git killed at its timeout)
   * and is removed; a younger one is waited for (the step is retried).
   */
  WORKER_GIT_STALE_LOCK_MS: z.coerce.number().int().min(1000).max(3_600_000).default(30_000),
  /** How often the target branch of every case awaiting review is fetched to see whether it moved; 0 turns the watch off. */
  WORKER_TARGET_WATCH_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  /** Enables draft pull requests on GitHub-hosted repositories. Never used to merge or approve. */
  WORKER_GITHUB_TOKEN: z.string().min(1).optional(),
  WORKER_GITHUB_API_URL: z.url().default('https://api.github.com'),
};

export const workerTasksSecrets = [
  'WORKER_GITHUB_TOKEN',
  'WORKER_S3_ACCESS_KEY_ID',
  'WORKER_S3_SECRET_ACCESS_KEY',
] as const;

export const workerTasksConfigSchema = z.object(workerTasksConfigShape);
export type WorkerTasksConfig = z.infer<typeof workerTasksConfigSchema>;
