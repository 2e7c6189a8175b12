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
  /** Holds `mirrors/`, `worktrees/` (the evidence service's EVIDENCE_WORKTREES_DIR is `<this>/worktrees`), `runs/`, `askpass/`. */
  WORKER_DIR: z.string().min(1).default('/var/lib/caseloop'),
  /** Check outputs under `checks/<caseId>/<revision>/<sha256>.log`; the evidence service's EVIDENCE_ARTIFACTS_DIR. */
  WORKER_ARTIFACTS_DIR: z.string().min(1).default('/var/lib/caseloop/artifacts'),
  /** Bytes kept of each check's output (first and last halves). */
  WORKER_CHECK_OUTPUT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(64 * 1024),
  /** Grace between SIGTERM and SIGKILL of a timed-out process group. */
  WORKER_KILL_GRACE_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  WORKER_GIT_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(300_000),
  /** How often the target branch of every case awaiting review is fetched to see whether it moved; 0 turns the watch off. */
  WORKER_TARGET_WATCH_INTERVAL_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
  /** Enables draft pull requests on GitHub-hosted repositories. Never used to merge or approve. */
  WORKER_GITHUB_TOKEN: z.string().min(1).optional(),
  WORKER_GITHUB_API_URL: z.url().default('https://api.github.com'),
};

export const workerTasksSecrets = ['WORKER_GITHUB_TOKEN'] as const;

export const workerTasksConfigSchema = z.object(workerTasksConfigShape);
export type WorkerTasksConfig = z.infer<typeof workerTasksConfigSchema>;
