import { defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';

/** The one place the lease service reads its environment (see docker-compose.yml for every key). */
export const leaseConfigSchema = z.object({
  ...platformConfigShape,
});
export type LeaseConfig = z.infer<typeof leaseConfigSchema>;

export const leaseConfig = defineConfig({ schema: leaseConfigSchema, secrets: [...platformSecrets] });
