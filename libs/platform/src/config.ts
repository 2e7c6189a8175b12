import { lstatSync, readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * One schema per service, parsed once at start. Secrets come from `<KEY>_FILE` (a regular file,
 * not a symlink, readable by its owner only) or, for development, from `<KEY>` itself.
 * Errors name keys, never values.
 */
export interface ConfigDefinition<S extends z.ZodObject = z.ZodObject> {
  schema: S;
  /** Keys whose values are secrets: readable from `<KEY>_FILE`, redacted everywhere. */
  secrets: readonly (keyof z.infer<S> & string)[];
}

export const defineConfig = <S extends z.ZodObject>(def: ConfigDefinition<S>): ConfigDefinition<S> => def;

export class ConfigError extends Error {
  constructor(readonly problems: { key: string; problem: string }[]) {
    super(`invalid configuration: ${problems.map((p) => `${p.key}: ${p.problem}`).join('; ')}`);
    this.name = 'ConfigError';
  }
  get keys(): string[] {
    return this.problems.map((p) => p.key);
  }
}

type Env = Record<string, string | undefined>;

export function parseConfig<S extends z.ZodObject>(
  def: ConfigDefinition<S>,
  env: Env = process.env,
): z.infer<S> {
  const problems: { key: string; problem: string }[] = [];
  const input: Record<string, unknown> = {};
  for (const key of Object.keys(def.schema.shape)) {
    const raw = env[key];
    if (raw !== undefined && raw !== '') input[key] = raw;
  }
  for (const key of def.secrets) {
    const file = env[`${key}_FILE`];
    if (file === undefined || file === '') continue;
    if (env[key] !== undefined && env[key] !== '') {
      problems.push({ key, problem: `set either ${key} or ${key}_FILE, not both` });
      continue;
    }
    try {
      input[key] = readSecretFile(file);
    } catch (e) {
      problems.push({ key: `${key}_FILE`, problem: (e as Error).message });
    }
  }
  const parsed = def.schema.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.map(String).join('.') || '(root)';
      problems.push({ key, problem: describeIssue(issue, key in input) });
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  return parsed.data;
}

/** Reads a secret file; the messages describe the file's kind and mode, never its content. */
export function readSecretFile(path: string): string {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    throw new Error('secret file is missing or unreadable');
  }
  if (st.isSymbolicLink()) throw new Error('secret file must be a regular file, not a symlink');
  if (!st.isFile()) throw new Error('secret file must be a regular file');
  if ((st.mode & 0o077) !== 0) {
    throw new Error(
      `secret file mode is ${(st.mode & 0o777).toString(8)}; it must be readable by its owner only (0600 or 0400)`,
    );
  }
  const value = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  if (value.length === 0) throw new Error('secret file is empty');
  return value;
}

/** Zod messages can quote the offending input (e.g. custom refinements); only the issue kind is reported. */
function describeIssue(issue: z.core.$ZodIssue, present: boolean): string {
  switch (issue.code) {
    case 'invalid_type':
      return present ? `expected ${issue.expected}` : 'required';
    case 'too_small':
      return `too small (minimum ${String(issue.minimum)})`;
    case 'too_big':
      return `too big (maximum ${String(issue.maximum)})`;
    case 'invalid_format':
      return issue.format === 'regex' ? 'has an invalid format' : `not a valid ${issue.format}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => String(v)).join(', ')}`;
    default:
      return 'invalid';
  }
}

/** The config with every secret replaced: what may be logged. */
export function redactConfig<T extends Record<string, unknown>>(config: T, secrets: readonly string[]): T {
  const out: Record<string, unknown> = { ...config };
  for (const k of secrets) if (out[k] !== undefined) out[k] = '[redacted]';
  return out as T;
}

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const safeToken = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** Keys every service reads: where the ledger is, how to reach NATS, where to serve health and metrics. */
export const platformConfigShape = {
  CASELOOP_NAMESPACE: z.string().regex(safeToken).default('caseloop'),
  LEDGER_STREAM: z.string().regex(safeToken).default('CASE_LEDGER'),
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  NATS_USER: z.string().min(1).optional(),
  NATS_PASSWORD: z.string().min(1).optional(),
  /** Create or converge the streams on boot; production runs the provisioning job instead. */
  LEDGER_PROVISION: bool.default(false),
  /** Durable consumer name; defaults to the service name. */
  CONSUMER_NAME: z.string().regex(safeToken).optional(),
  CONSUMER_MAX_DELIVER: z.coerce.number().int().min(1).max(1000).default(10),
  /**
   * An event whose last delivery failed because a dependency is down (object store, Discord) is held
   * and tried again every minute for up to this long before it is dead-lettered; 0: dead-letter at once.
   */
  CONSUMER_OUTAGE_HOLD_MS: z.coerce.number().int().min(0).max(86_400_000).default(3_600_000),
  CONSUMER_ACK_WAIT_MS: z.coerce.number().int().min(1000).default(30_000),
  CONSUMER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  HTTP_HOST: z.string().min(1).default('0.0.0.0'),
  HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /**
   * A marker the process that started this one chose for it, repeated by `/healthz`: that process
   * knows the answer on its port comes from its own child and not from another holding the port.
   */
  CASELOOP_INSTANCE_ID: z.string().regex(safeToken).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
};
export const platformSecrets = ['NATS_PASSWORD'] as const;

export const platformConfigSchema = z.object(platformConfigShape);
export type PlatformConfig = z.infer<typeof platformConfigSchema>;
