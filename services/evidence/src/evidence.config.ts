import { defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';

/** The one place the evidence service reads its environment (see docker-compose.yml for every key). */
export const evidenceConfigSchema = z.object({
  ...platformConfigShape,
});
export type EvidenceConfig = z.infer<typeof evidenceConfigSchema>;

export const evidenceConfig = defineConfig({ schema: evidenceConfigSchema, secrets: [...platformSecrets] });
