import { defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';

/** The one place the intake service reads its environment (see docker-compose.yml for every key). */
export const intakeConfigSchema = z.object({
  ...platformConfigShape,
});
export type IntakeConfig = z.infer<typeof intakeConfigSchema>;

export const intakeConfig = defineConfig({ schema: intakeConfigSchema, secrets: [...platformSecrets] });
