import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

const snowflake = z.string().regex(/^\d{1,25}$/, 'must be a Discord id (digits)');

/**
 * What the console needs of intake's binding file: the guild, its reviewers, and the roles whose
 * members may read the console. Intake validates the whole file strictly; the console reads only
 * these keys, so the two share one file and one list of reviewers.
 */
const accessSchema = z.object({
  guildId: snowflake,
  reviewers: z.array(snowflake).min(1),
  consoleRoles: z.array(snowflake).default([]),
});
export type ConsoleAccess = z.infer<typeof accessSchema>;

export class ConsoleAccessError extends Error {
  constructor(readonly keys: string[]) {
    super(`console binding: ${keys.join(', ')} invalid or missing`);
    this.name = 'ConsoleAccessError';
  }
}

export function loadConsoleAccess(file: string): ConsoleAccess {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(file, 'utf8'));
  } catch {
    throw new ConsoleAccessError(['CONSOLE_BINDING_FILE']);
  }
  const r = accessSchema.safeParse(doc);
  if (!r.success) throw new ConsoleAccessError(r.error.issues.map((i) => `binding.${i.path.join('.')}`));
  return r.data;
}

export type Admission = { admitted: true; as: 'reviewer' | 'role' } | { admitted: false };

/**
 * Pure: a member of the binding's guild (`memberRoles` null: not a member) who is one of its
 * reviewers, or holds one of the console roles. Whoever leaves the guild is out, reviewer or not.
 */
export function admit(
  access: ConsoleAccess,
  userId: string,
  memberRoles: readonly string[] | null,
): Admission {
  if (memberRoles === null) return { admitted: false };
  if (access.reviewers.includes(userId)) return { admitted: true, as: 'reviewer' };
  if (memberRoles?.some((r) => access.consoleRoles.includes(r))) return { admitted: true, as: 'role' };
  return { admitted: false };
}
