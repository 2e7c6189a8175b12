import { z } from 'zod';
import { resourceName } from '@caseloop/contracts';
import { DEFAULT_CHROMIUM_ARGS } from '../browser/chromium.browser';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const ms = (min: number, max: number, dflt: number) =>
  z.coerce.number().int().min(min).max(max).default(dflt);

/**
 * The evidence service's own keys (merged into its one config schema with the platform's).
 * S3 credentials are secrets: `<KEY>_FILE` in production, never logged.
 */
export const evidenceValidationConfigShape = {
  /** The target repositories file the worker reads too (client start, url, flow, fixtureData). */
  EVIDENCE_REPOSITORIES_FILE: z.string().min(1),
  /**
   * The evidence service's own directory (no other service reads or writes it): `mirrors/` fetched
   * from each repository's remote at the case branch, `checkouts/` of one revision while its client runs,
   * `cache/` shared by the setup steps' package managers, `runs/` their throwaway HOME and TMPDIR.
   */
  EVIDENCE_DIR: z.string().min(1).default('/var/lib/caseloop'),
  EVIDENCE_GIT_TIMEOUT_MS: ms(1000, 3_600_000, 300_000),
  /** The bucket the worker stores whole check logs in (WORKER_S3_BUCKET); this service's own bucket when unset. */
  EVIDENCE_CHECK_LOG_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/)
    .optional(),

  EVIDENCE_S3_ENDPOINT: z.url().optional(),
  EVIDENCE_S3_REGION: z.string().min(1).default('us-east-1'),
  EVIDENCE_S3_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/),
  EVIDENCE_S3_FORCE_PATH_STYLE: bool.default(true),
  EVIDENCE_S3_ACCESS_KEY_ID: z.string().min(1),
  EVIDENCE_S3_SECRET_ACCESS_KEY: z.string().min(1),
  /** Reviewers' links are short-lived. */
  EVIDENCE_S3_PRESIGN_TTL_SECONDS: z.coerce.number().int().min(60).max(3600).default(900),
  /** Create the bucket on boot (sandbox); production buckets are provisioned private by deployment. */
  EVIDENCE_S3_CREATE_BUCKET: bool.default(false),

  /** Where reviewers reach this service: receipts link to `<url>/evidence/cases/...`, which redirects to a presigned link. */
  EVIDENCE_PUBLIC_URL: z.url().optional(),

  EVIDENCE_BROWSER_EXECUTABLE: z.string().min(1).default('/usr/bin/chromium'),
  /** Comma-separated Chromium arguments. */
  EVIDENCE_BROWSER_ARGS: z
    .string()
    .default(DEFAULT_CHROMIUM_ARGS.join(','))
    .transform((s) =>
      s
        .split(',')
        .map((a) => a.trim())
        .filter(Boolean),
    ),
  EVIDENCE_BROWSER_LAUNCH_TIMEOUT_MS: ms(1000, 300_000, 30_000),
  /** Also store a Playwright trace of every flow (reviewed like its screenshots). */
  EVIDENCE_BROWSER_TRACE: bool.default(false),
  /** The shared client every case's flow runs on, serialized by its lease. */
  EVIDENCE_BROWSER_RESOURCE: resourceName.default('browser:default'),

  EVIDENCE_LEASE_TTL_MS: ms(1000, 3_600_000, 30_000),
  EVIDENCE_LEASE_WAIT_MS: ms(0, 3_600_000, 600_000),
  /** Renew before a step when less than this remains; one step longer than the TTL loses the lease. */
  EVIDENCE_LEASE_RENEW_WITHIN_MS: ms(100, 3_600_000, 15_000),
  EVIDENCE_APP_READY_TIMEOUT_MS: ms(500, 600_000, 60_000),
  EVIDENCE_STEP_TIMEOUT_MS: ms(100, 120_000, 10_000),
  EVIDENCE_FLOW_TIMEOUT_MS: ms(1000, 1_800_000, 180_000),
};

export const evidenceValidationSecrets = [
  'EVIDENCE_S3_ACCESS_KEY_ID',
  'EVIDENCE_S3_SECRET_ACCESS_KEY',
] as const;

export const evidenceValidationConfigSchema = z.object(evidenceValidationConfigShape);
export type EvidenceValidationConfig = z.infer<typeof evidenceValidationConfigSchema>;
