import { defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** The one place the intake service reads its environment (see docker-compose.yml for every key). */
export const intakeConfigSchema = z.object({
  ...platformConfigShape,
  /** YAML or JSON: guild, channels and modes, reporters, reporter roles, reviewers, limits. */
  INTAKE_BINDING_FILE: z.string().min(1),
  /** The bot token: a regular file (not a symlink), mode 0600. Read once; never logged. */
  INTAKE_DISCORD_TOKEN_FILE: z.string().min(1),
  /** `http://127.0.0.1:PORT/api` for a local Discord; unset for discord.com. */
  INTAKE_DISCORD_API_URL: z.url().optional(),
  /** How long Discord is trusted to deduplicate a nonce: an unresolved post older than this is refused, never re-sent. */
  INTAKE_DEDUPE_WINDOW_MS: z.coerce.number().int().min(1_000).max(600_000).default(90_000),
  /** With nothing seen yet in a channel, how far back the first delta reaches. */
  INTAKE_DELTA_BACKFILL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(24 * 3_600_000),
  INTAKE_DELTA_PAGE_SIZE: z.coerce.number().int().min(1).max(100).default(100),
  INTAKE_READY_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(30_000),
  /** Recent messages reconciliation reads back when looking for an unconfirmed post. */
  INTAKE_RECONCILE_FETCH_LIMIT: z.coerce.number().int().min(1).max(100).default(50),
  /** REST requests per second across every route: Discord's global limit for a bot is 50. */
  INTAKE_REST_GLOBAL_RPS: z.coerce.number().int().min(1).max(10_000).default(50),
  /** Skip discord.js's 5 s identify throttle: for a local Discord only. */
  INTAKE_FAST_IDENTIFY: bool.default(false),
  /**
   * Register `/caseloop` in the bound guild at start (a guild-scoped bulk overwrite, effective at
   * once; needs the bot invited with the applications.commands scope). Off: manage commands yourself.
   */
  INTAKE_REGISTER_COMMANDS: bool.default(true),
  /**
   * Words that, followed by a colon, mark private text in a report (comma-separated; default
   * private,confidential,customer). The ledger keeps the report redacted with these; set the same as
   * COORDINATOR_PRIVATE_MARKERS.
   */
  INTAKE_PRIVATE_MARKERS: z.string().min(1).optional(),
});
export type IntakeConfig = z.infer<typeof intakeConfigSchema>;

export const intakeConfig = defineConfig({ schema: intakeConfigSchema, secrets: [...platformSecrets] });
