import { defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';

const ms = (dflt: number) => z.coerce.number().int().min(0).default(dflt);

/** The one place the monitor service reads its environment (see docker-compose.yml for every key). */
export const monitorConfigSchema = z.object({
  ...platformConfigShape,
  /** The case-view projection the live set is read from. May carry a password: a secret. */
  CASELOOP_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .default('postgres://postgres@127.0.0.1:5432/caseloop'),
  CASELOOP_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
    .default('caseloop'),
  /** How often the live set is rebuilt; 0 turns the heartbeat off (tests drive it by hand). */
  MONITOR_HEARTBEAT_MS: ms(60_000),
  /** Step budgets: how long a case may wait in a status before "no progress" is recorded. */
  MONITOR_BUDGET_TRIAGE_MS: ms(30 * 60_000),
  MONITOR_BUDGET_IN_PROGRESS_MS: ms(2 * 3_600_000),
  MONITOR_BUDGET_VALIDATING_MS: ms(60 * 60_000),
  MONITOR_BUDGET_GATE_MS: ms(30 * 60_000),
  MONITOR_DELIVERY_STUCK_MS: ms(10 * 60_000),
  MONITOR_CANDIDATE_WINDOW_MS: ms(24 * 3_600_000),
  MONITOR_CANDIDATE_MIN_CASES: z.coerce.number().int().min(2).default(3),
});
export type MonitorConfig = z.infer<typeof monitorConfigSchema>;

export const monitorConfig = defineConfig({
  schema: monitorConfigSchema,
  secrets: [...platformSecrets, 'CASELOOP_DATABASE_URL'],
});
