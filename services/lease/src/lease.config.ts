import { defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';

/** The one place the lease service reads its environment (see docker-compose.yml for every key). */
export const leaseConfigSchema = z.object({
  ...platformConfigShape,
  /** The KV bucket holding one entry per resource and its line of waiters. */
  LEASE_BUCKET: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .default('caseloop-leases'),
  /** Clock-skew margin: a lapsed lease is taken over only this long after its recorded expiry. */
  LEASE_SKEW_MS: z.coerce.number().int().min(0).max(600_000).default(2_000),
  LEASE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  /** A grant its requester has not claimed within this long is released as unused (`LeaseReleased{unclaimed}`). */
  LEASE_CLAIM_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  LEASE_BUCKET_HISTORY: z.coerce.number().int().min(1).max(64).default(5),
});
export type LeaseConfig = z.infer<typeof leaseConfigSchema>;

export const leaseConfig = defineConfig({ schema: leaseConfigSchema, secrets: [...platformSecrets] });
