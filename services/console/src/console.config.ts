import { ConfigError, defineConfig, platformConfigShape, platformSecrets } from '@caseloop/platform';
import { z } from 'zod';

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost)$/;
export const isLoopback = (host: string): boolean => LOOPBACK.test(host);

/**
 * The one place the console reads its environment. The console is read-only: it reads the
 * case-view projection and the ledger's dead letters and appends nothing.
 */
export const consoleConfigSchema = z.object({
  ...platformConfigShape,
  /** The case-view projection the pages read. May carry a password: a secret. */
  CASELOOP_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .default('postgres://postgres@127.0.0.1:5432/caseloop'),
  CASELOOP_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
    .default('caseloop'),
  /**
   * Who gets in. `discord`: sign in with Discord (OAuth2 code grant with PKCE), admitting the
   * binding's reviewers and the members of its console roles. `loopback`: no sign-in at all,
   * allowed only on a loopback HTTP_HOST and only when set explicitly.
   */
  CONSOLE_AUTH: z.enum(['discord', 'loopback']).default('discord'),
  /** Where browsers reach the console; the OAuth2 redirect URI is `<url>/auth/callback`. */
  CONSOLE_PUBLIC_URL: z.url().optional(),
  /** The Discord application's client id (its application id). */
  CONSOLE_DISCORD_CLIENT_ID: z
    .string()
    .regex(/^\d{1,25}$/, 'must be a Discord id (digits)')
    .optional(),
  /** The application's client secret. A secret. */
  CONSOLE_DISCORD_CLIENT_SECRET: z.string().min(8).optional(),
  /** Discord's API (token and user routes) and its authorization page; the sandbox points both at the local Discord. */
  CONSOLE_DISCORD_API_URL: z.url().default('https://discord.com/api/v10'),
  CONSOLE_DISCORD_AUTHORIZE_URL: z.url().default('https://discord.com/oauth2/authorize'),
  /** The binding intake reads: its guildId, reviewers and consoleRoles say who may sign in. */
  CONSOLE_BINDING_FILE: z.string().min(1).optional(),
  /** Signs the session cookies (HMAC-SHA256); at least 32 characters. A secret. */
  CONSOLE_SESSION_SECRET: z.string().min(32, 'at least 32 characters').optional(),
  /** How long a sign-in lasts at most (membership is re-checked within it, see below). */
  CONSOLE_SESSION_TTL_S: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 86_400)
    .default(8 * 3600),
  /**
   * Seconds between re-checks of a signed-in person's guild membership and roles with Discord (with
   * the person's own token, kept sealed in the session cookie): the first request after that asks
   * Discord again, and someone who left the guild or lost the role is refused from then on.
   */
  CONSOLE_MEMBERSHIP_RECHECK_S: z.coerce.number().int().min(1).max(86_400).default(300),
  /** A token scripts send as `Authorization: Bearer <token>` (or a Basic password) instead of signing in. A secret. */
  CONSOLE_API_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  /** Where viewers reach the evidence service: thumbnails load from `<url>/evidence/cases/…` (a 302 to a short-lived presigned link). */
  EVIDENCE_PUBLIC_URL: z.url().optional(),
  /** Seconds between reloads of the case list (0: never). */
  CONSOLE_REFRESH_S: z.coerce.number().int().min(0).max(3600).default(30),
});
export type ConsoleConfig = z.infer<typeof consoleConfigSchema>;

export const consoleConfig = defineConfig({
  schema: consoleConfigSchema,
  secrets: [
    ...platformSecrets,
    'CASELOOP_DATABASE_URL',
    'CONSOLE_DISCORD_CLIENT_SECRET',
    'CONSOLE_SESSION_SECRET',
    'CONSOLE_API_TOKEN',
  ],
});

export interface DiscordSignIn {
  clientId: string;
  clientSecret: string | null;
  apiUrl: string;
  authorizeUrl: string;
  redirectUri: string;
  bindingFile: string;
  sessionSecret: string;
  sessionTtlS: number;
  /** How often a session's membership is asked of Discord again. */
  membershipRecheckS: number;
  /** Cookies get `Secure` when the console is reached over https. */
  secureCookies: boolean;
}

export interface ConsoleSettings {
  host: string;
  /** `null`: loopback without sign-in (explicitly chosen). */
  signIn: DiscordSignIn | null;
  apiToken: string | null;
  evidenceBaseUrl: string | null;
  refreshSeconds: number;
}

const strip = (url: string): string => url.replace(/\/+$/, '');

/**
 * The settings the console runs with. Every problem names its key, never a value. Sign-in is the
 * default; going without it needs `CONSOLE_AUTH=loopback` and a loopback HTTP_HOST.
 */
export function consoleSettings(c: ConsoleConfig): ConsoleSettings {
  const problems: { key: string; problem: string }[] = [];
  let signIn: DiscordSignIn | null = null;
  if (c.CONSOLE_AUTH === 'loopback') {
    if (!isLoopback(c.HTTP_HOST))
      problems.push({
        key: 'CONSOLE_AUTH',
        problem: 'loopback (no sign-in) needs a loopback HTTP_HOST; use discord to serve beyond this host',
      });
  } else {
    const need = [
      'CONSOLE_PUBLIC_URL',
      'CONSOLE_DISCORD_CLIENT_ID',
      'CONSOLE_BINDING_FILE',
      'CONSOLE_SESSION_SECRET',
    ] as const;
    for (const key of need)
      if (c[key] === undefined) problems.push({ key, problem: 'required when CONSOLE_AUTH=discord' });
    if (problems.length === 0) {
      const publicUrl = strip(c.CONSOLE_PUBLIC_URL as string);
      signIn = {
        clientId: c.CONSOLE_DISCORD_CLIENT_ID as string,
        clientSecret: c.CONSOLE_DISCORD_CLIENT_SECRET ?? null,
        apiUrl: strip(c.CONSOLE_DISCORD_API_URL),
        authorizeUrl: c.CONSOLE_DISCORD_AUTHORIZE_URL,
        redirectUri: `${publicUrl}/auth/callback`,
        bindingFile: c.CONSOLE_BINDING_FILE as string,
        sessionSecret: c.CONSOLE_SESSION_SECRET as string,
        sessionTtlS: c.CONSOLE_SESSION_TTL_S,
        membershipRecheckS: c.CONSOLE_MEMBERSHIP_RECHECK_S,
        secureCookies: publicUrl.startsWith('https:'),
      };
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    host: c.HTTP_HOST,
    signIn,
    apiToken: c.CONSOLE_API_TOKEN ?? null,
    evidenceBaseUrl: c.EVIDENCE_PUBLIC_URL ? strip(c.EVIDENCE_PUBLIC_URL) : null,
    refreshSeconds: c.CONSOLE_REFRESH_S,
  };
}

export const CONSOLE_SETTINGS = Symbol('CONSOLE_SETTINGS');
