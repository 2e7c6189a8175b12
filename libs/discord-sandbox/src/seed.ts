import { z } from 'zod';

/**
 * What a local Discord starts with. Ids are optional: missing ones are minted as snowflakes at start,
 * so a seed file can stay human-sized. `persona` and `mode` are sandbox labels (who plays the
 * reporter, reviewer or stranger; how intake should bind a channel), never sent over the Discord API.
 */
const id = z.string().regex(/^\d{17,20}$/, 'must be a snowflake (17-20 digits)');

export const userSeedSchema = z.strictObject({
  id: id.optional(),
  username: z.string().min(2).max(32),
  globalName: z.string().min(1).max(32).optional(),
  persona: z.enum(['reporter', 'reviewer', 'stranger']).default('stranger'),
  roles: z.array(z.string().min(1)).default([]),
  bot: z.boolean().default(false),
});

export const channelSeedSchema = z.strictObject({
  id: id.optional(),
  name: z.string().regex(/^[a-z0-9_-]{1,100}$/, 'lower-case Discord channel name'),
  topic: z.string().max(1024).optional(),
  mode: z.enum(['open', 'mention']).optional(),
});

export const roleSeedSchema = z.strictObject({
  id: id.optional(),
  name: z.string().min(1).max(100),
  color: z.number().int().min(0).max(0xffffff).default(0),
});

export const localDiscordSeedSchema = z.strictObject({
  guild: z.strictObject({ id: id.optional(), name: z.string().min(2).max(100) }),
  channels: z.array(channelSeedSchema).min(1),
  users: z.array(userSeedSchema).min(1),
  bot: z.strictObject({
    id: id.optional(),
    username: z.string().min(2).max(32),
    applicationId: id.optional(),
    /** The bot's managed role (Discord creates one per bot). */
    roleId: id.optional(),
    token: z.string().min(1).optional(),
  }),
  roles: z.array(roleSeedSchema).default([]),
  /** Other servers the bot is in (not bound to caseloop): traffic there must be ignored. */
  otherGuilds: z
    .array(
      z.strictObject({
        id: id.optional(),
        name: z.string().min(2).max(100),
        channels: z.array(channelSeedSchema).min(1),
        /** Usernames of members (default: every user). */
        members: z.array(z.string()).optional(),
      }),
    )
    .default([]),
});

export type LocalDiscordSeed = z.input<typeof localDiscordSeedSchema>;
export type ParsedSeed = z.output<typeof localDiscordSeedSchema>;
export type Persona = z.output<typeof userSeedSchema>['persona'];
export type ChannelMode = NonNullable<z.output<typeof channelSeedSchema>['mode']>;

/** The sandbox's cast: two reporters, a reviewer, a stranger and the bot, in #bugs and #feedback. */
export const defaultSeed = (): LocalDiscordSeed => ({
  guild: { name: 'caseloop-sandbox' },
  channels: [
    { name: 'bugs', topic: 'Report a bug: one message, one case.', mode: 'open' },
    { name: 'feedback', topic: 'Ideas and feedback (mention the bot).', mode: 'mention' },
  ],
  roles: [
    { name: 'reporters', color: 0x3498db },
    { name: 'reviewers', color: 0xe67e22 },
  ],
  users: [
    { username: 'alice', globalName: 'Alice', persona: 'reporter', roles: ['reporters'] },
    { username: 'bob', globalName: 'Bob', persona: 'reporter', roles: ['reporters'] },
    { username: 'rita', globalName: 'Rita', persona: 'reviewer', roles: ['reviewers'] },
    { username: 'sam', globalName: 'Sam', persona: 'stranger' },
  ],
  bot: { username: 'caseloop' },
});
