import { z } from 'zod';

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
export const safeId = z.string().regex(SAFE_ID, 'not a safe id');
export const snowflake = z.string().regex(/^\d{1,25}$/, 'not a snowflake');
export const isoTime = z.iso.datetime({ offset: true });
export const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'not a sha-256 hex digest');
/** A git object id (sha-1 today, sha-256 repositories tomorrow). */
export const gitRevision = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'not a full git revision');
export const producerName = z.enum(['intake', 'coordinator', 'worker', 'lease', 'evidence', 'monitor']);

export const attachmentRef = z.object({
  id: snowflake,
  name: z.string().max(1024),
  contentType: z.string().max(255).nullable(),
  size: z.number().int().nonnegative(),
  url: z.string().url().max(2048),
});
export type AttachmentRef = z.infer<typeof attachmentRef>;

/** Where in Discord a source or a delivery lives. `threadId` is null for a top-level message. */
export const discordPlace = z.object({
  guildId: snowflake,
  channelId: snowflake,
  threadId: snowflake.nullable(),
  messageId: snowflake,
});
export type DiscordPlace = z.infer<typeof discordPlace>;

export const checkKind = z.enum([
  'format',
  'lint',
  'typecheck',
  'focused_test',
  'regression_test',
  'build',
  'other',
]);
export const checkOutcome = z.enum(['passed', 'failed', 'timeout', 'error', 'skipped']);
export const checkResult = z.object({
  name: z.string().min(1).max(100),
  kind: checkKind,
  outcome: checkOutcome,
  revision: gitRevision,
  durationMs: z.number().int().nonnegative(),
  exitCode: z.number().int().nullable(),
  /** sha-256 of the whole redacted output (stored in S3 at `checkOutputArtifactPath`), reviewed again and stored by the evidence service. */
  outputSha256: sha256Hex.nullable(),
  outputBytes: z.number().int().nonnegative(),
});
export type CheckResult = z.infer<typeof checkResult>;

export const classification = z.enum([
  'bug',
  'regression',
  'feedback',
  'question',
  'access',
  'private_context',
]);
export type Classification = z.infer<typeof classification>;

export const clientOutcome = z.enum(['passed', 'failed', 'blocked']);
export const caseOutcome = z.enum(['pr_ready', 'implemented_client_blocked', 'blocked']);
