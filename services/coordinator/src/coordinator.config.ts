import { defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';

/** The one place the coordinator service reads its environment (see docker-compose.yml for every key). */
export const coordinatorConfigSchema = z.object({
  ...platformConfigShape,
});
export type CoordinatorConfig = z.infer<typeof coordinatorConfigSchema>;

export const coordinatorConfig = defineConfig({ schema: coordinatorConfigSchema, secrets: [...platformSecrets] });
