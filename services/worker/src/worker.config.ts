import { defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';
import { workerTasksConfigShape, workerTasksSecrets } from './tasks/worker-tasks.config';

/** The one place the worker service reads its environment (see docker-compose.yml for every key). */
export const workerConfigSchema = z.object({
  ...platformConfigShape,
  ...workerTasksConfigShape,
});
export type WorkerConfig = z.infer<typeof workerConfigSchema>;

export const workerConfig = defineConfig({
  schema: workerConfigSchema,
  secrets: [...platformSecrets, ...workerTasksSecrets],
});
