import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { CliError } from './cli.errors';

/**
 * The CLI's one configuration: environment first, flags override. Errors name keys, never values;
 * the database URL and NATS password are secrets and are never printed.
 */
export const cliConfigSchema = z.object({
  CASELOOP_NATS_URL: z
    .string()
    .regex(/^(nats|tls|ws|wss):\/\//, 'must be a nats:// (or tls://) URL')
    .default('nats://127.0.0.1:4222'),
  CASELOOP_NATS_USER: z.string().min(1).optional(),
  CASELOOP_NATS_PASSWORD: z.string().min(1).optional(),
  CASELOOP_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/, 'must be a safe id')
    .default('caseloop'),
  CASELOOP_STREAM: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a stream name')
    .default('CASE_LEDGER'),
  CASELOOP_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .default('postgres://postgres@127.0.0.1:5432/caseloop'),
  CASELOOP_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
    .default('caseloop'),
});
export type CliConfig = z.infer<typeof cliConfigSchema>;

export interface GlobalFlags {
  natsUrl?: string;
  namespace?: string;
  stream?: string;
  databaseUrl?: string;
  dbSchema?: string;
}

const FLAG_KEYS: Record<keyof GlobalFlags, keyof CliConfig> = {
  natsUrl: 'CASELOOP_NATS_URL',
  namespace: 'CASELOOP_NAMESPACE',
  stream: 'CASELOOP_STREAM',
  databaseUrl: 'CASELOOP_DATABASE_URL',
  dbSchema: 'CASELOOP_DB_SCHEMA',
};

export function parseCliConfig(env: Record<string, string | undefined>, flags: GlobalFlags): CliConfig {
  const input: Record<string, string> = {};
  for (const key of Object.keys(cliConfigSchema.shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') input[key] = v;
  }
  const pwFile = env.CASELOOP_NATS_PASSWORD_FILE;
  if (pwFile) {
    try {
      input.CASELOOP_NATS_PASSWORD = readFileSync(pwFile, 'utf8').trim();
    } catch {
      throw new CliError('CASELOOP_NATS_PASSWORD_FILE: cannot be read');
    }
  }
  for (const [flag, key] of Object.entries(FLAG_KEYS) as [keyof GlobalFlags, keyof CliConfig][]) {
    const v = flags[flag];
    if (v !== undefined) input[key] = v;
  }
  const parsed = cliConfigSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new CliError(`invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** A URL fit to print: no user info. */
export const displayUrl = (url: string): string => url.replace(/\/\/[^@/]*@/, '//');
