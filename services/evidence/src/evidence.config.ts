import { defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';
import {
  evidenceValidationConfigShape,
  evidenceValidationSecrets,
} from './validation/evidence-validation.config';

/** The one place the evidence service reads its environment (see docker-compose.yml for every key). */
export const evidenceConfigSchema = z.object({
  ...platformConfigShape,
  ...evidenceValidationConfigShape,
  /** The lease service's KV bucket; the browser lease is checked there before every step. */
  LEASE_BUCKET: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .default('caseloop-leases'),
});
export type EvidenceConfig = z.infer<typeof evidenceConfigSchema>;

export const evidenceConfig = defineConfig({
  schema: evidenceConfigSchema,
  secrets: [...platformSecrets, ...evidenceValidationSecrets],
});
