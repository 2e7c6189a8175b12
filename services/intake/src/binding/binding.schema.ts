import { z } from 'zod';

const snowflake = z.string().regex(/^\d{1,25}$/, 'must be a Discord id (digits)');

/**
 * What this installation listens to and who may speak. Strict everywhere: a misspelt key is
 * refused instead of silently meaning "no limit" or "nobody".
 */
export const channelBindingSchema = z.strictObject({
  id: snowflake,
  /** `open`: every listed author's message is a report; `mention`: only messages that mention the bot. */
  mode: z.enum(['open', 'mention']),
});

export const limitsSchema = z.strictObject({
  /** Longer messages are dropped (`oversized`) and answered with one fixed line. */
  inboundMaxChars: z.number().int().min(1).max(16_000),
  /**
   * Per reporter and UTC day, counted over top-level reports (replies inside a case thread do not
   * count: answering the bot's questions must never lock a reporter out).
   */
  reportsPerDayPerUser: z.number().int().min(1).max(10_000),
  /** Discord refuses content over 2000 characters. */
  replyChunkSize: z.number().int().min(100).max(2000),
});

export const bindingSchema = z
  .strictObject({
    guildId: snowflake,
    channels: z.array(channelBindingSchema).min(1, 'must list at least one channel'),
    /** Users whose messages are reports. */
    reporters: z.array(snowflake).default([]),
    /** Every member holding one of these roles is a reporter. */
    reporterRoles: z.array(snowflake).default([]),
    /** Users who may approve, revise, reject, settle link reviews and clear privacy; they may report too. */
    reviewers: z.array(snowflake).min(1, 'must list at least one reviewer'),
    /** Every member holding one of these roles may sign in to the console (read-only); reviewers always may. */
    consoleRoles: z.array(snowflake).default([]),
    limits: limitsSchema,
  })
  .superRefine((b, ctx) => {
    if (b.reporters.length === 0 && b.reporterRoles.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['reporters'],
        message: 'reporters and reporterRoles are both empty: nobody could report',
      });
    }
    const seen = new Set<string>();
    b.channels.forEach((c, i) => {
      if (seen.has(c.id))
        ctx.addIssue({ code: 'custom', path: ['channels', i, 'id'], message: 'channel listed twice' });
      seen.add(c.id);
    });
  });

export type Binding = z.infer<typeof bindingSchema>;
export type ChannelMode = Binding['channels'][number]['mode'];

export type BindingErrorCode =
  'binding_unreadable' | 'binding_invalid' | 'binding_lists_bot' | 'binding_unknown_channel';

/** A refused binding. The message names keys (and ids the operator wrote), never the token. */
export class BindingError extends Error {
  constructor(
    readonly code: BindingErrorCode,
    message: string,
    readonly keys: string[] = [],
  ) {
    super(message);
    this.name = 'BindingError';
  }
}

const keyOf = (path: readonly PropertyKey[]): string =>
  ['binding', ...path]
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');

/** Parses an already-decoded YAML/JSON document; every problem is reported with its key. */
export function parseBinding(doc: unknown): Binding {
  const r = bindingSchema.safeParse(doc);
  if (r.success) return r.data;
  const keys: string[] = [];
  const lines = r.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const named = issue.keys.map((k) => keyOf([...issue.path, k]));
      keys.push(...named);
      return `${named.join(', ')}: unknown key${named.length > 1 ? 's' : ''}`;
    }
    const key = keyOf(issue.path);
    keys.push(key);
    return `${key}: ${issue.message}`;
  });
  return fail(lines, keys);
}

function fail(lines: string[], keys: string[]): never {
  throw new BindingError('binding_invalid', `invalid binding: ${lines.join('; ')}`, keys);
}

/** Every user id the binding names, with the key it came from (for the "bot listed as a user" check). */
export function listedUsers(b: Binding): { id: string; key: string }[] {
  return [
    ...b.reporters.map((id, i) => ({ id, key: `binding.reporters[${i}]` })),
    ...b.reviewers.map((id, i) => ({ id, key: `binding.reviewers[${i}]` })),
  ];
}
