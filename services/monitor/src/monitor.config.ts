import { defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';

/** The one place the monitor service reads its environment (see docker-compose.yml for every key). */
export const monitorConfigSchema = z.object({
  ...platformConfigShape,
});
export type MonitorConfig = z.infer<typeof monitorConfigSchema>;

export const monitorConfig = defineConfig({ schema: monitorConfigSchema, secrets: [...platformSecrets] });
