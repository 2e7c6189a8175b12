import { createServer, Server } from 'node:http';
import type { ConsoleSettings } from '../console.config';
import type { ConsoleAccess } from './console-access';
import { Authenticated, ConsoleAuth, SESSION_COOKIE, SIGN_IN_COOKIE } from './console-auth';

/**
 * The membership re-check against a Discord stand-in on loopback whose guild member route says
 * what each test needs (still in, role gone, left the guild, token refused, hung up), with the
 * console's clock in the test's hand. The local Discord drives the same path end to end in
 * console-sign-in.int.spec.ts (a role taken away).
 */
const GUILD = '100000000000000001';
const ROLE = '700000000000000007';
const MEMBER = '300000000000000003';
const REVIEWER = '400000000000000004';
const TOKEN = 'discord-user-token-abcdef';

const access: ConsoleAccess = { guildId: GUILD, reviewers: [REVIEWER], consoleRoles: [ROLE] };
const settings = (api: string): ConsoleSettings => ({
  host: '0.0.0.0',
  signIn: {
    clientId: '888888888888888888',
    clientSecret: null,
    apiUrl: api,
    authorizeUrl: 'https://discord.example/oauth2/authorize',
    redirectUri: 'https://console.example/auth/callback',
    bindingFile: '/etc/caseloop/binding.yaml',
    sessionSecret: 's'.repeat(40),
    sessionTtlS: 8 * 3600,
    membershipRecheckS: 300,
    secureCookies: true,
  },
  apiToken: null,
  evidenceBaseUrl: null,
  refreshSeconds: 30,
});

/**
 * Discord as the console calls it, on loopback: the token exchange, who the user is, and the guild
 * member route, which answers what `member` says (a test turns it into "left the guild" and so on).
 */
type Answer = { status: number; body: unknown } | 'hang up';
let member: () => Answer;
const calls: string[] = [];
let clock = Date.parse('2026-12-01T10:00:00Z');
let currentUser = '';
let server: Server;
let auth: ConsoleAuth;

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = (req.url ?? '').replace(/^\/api\/v10/, '');
    calls.push(path);
    const answer: Answer =
      path === '/oauth2/token'
        ? { status: 200, body: { access_token: TOKEN, token_type: 'Bearer' } }
        : path === '/users/@me'
          ? { status: 200, body: { id: currentUser, username: 'someone' } }
          : path === `/users/@me/guilds/${GUILD}/member`
            ? member()
            : { status: 404, body: {} };
    req.resume();
    if (answer === 'hang up') return req.socket.destroy();
    res.writeHead(answer.status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  auth = new ConsoleAuth(settings(`http://127.0.0.1:${port}/api/v10`), access, () => clock);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const inGuild = (roles: string[]) => (): Answer => ({ status: 200, body: { roles } });
const leftGuild = (): Answer => ({ status: 404, body: { message: 'Unknown Guild', code: 10004 } });

beforeEach(() => {
  calls.length = 0;
  member = inGuild([ROLE]);
});

const cookiePair = (setCookie: string): string => setCookie.split(';')[0] as string;

async function signIn(user: string): Promise<string> {
  currentUser = user;
  const begun = auth.begin('/cases');
  const state = new URL(begun.location).searchParams.get('state') as string;
  const done = await auth.complete({ headers: { cookie: cookiePair(begun.cookie) } }, { code: 'c', state });
  const session = done.cookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`)) as string;
  expect(done.cookies.some((c) => c.startsWith(`${SIGN_IN_COOKIE}=;`))).toBe(true);
  return cookiePair(session);
}

const at = async (cookie: string, seconds: number): Promise<Authenticated> => {
  clock += seconds * 1000;
  return auth.authenticate({ headers: { cookie } });
};
const memberRoute = () => calls.filter((c) => c.endsWith('/member')).length;

describe('the membership re-check', () => {
  it('keeps the token sealed in the session, and asks Discord only once the interval is over', async () => {
    const cookie = await signIn(MEMBER);
    expect(decodeURIComponent(cookie)).not.toContain(TOKEN);
    expect(memberRoute()).toBe(1);
    const soon = await at(cookie, 299);
    expect(soon).toEqual({ viewer: { kind: 'member', userId: MEMBER, name: 'someone' }, cookies: [] });
    expect(memberRoute()).toBe(1);
    const due = await at(cookie, 2);
    expect(due.viewer.kind).toBe('member');
    expect(memberRoute()).toBe(2);
    expect(due.cookies).toHaveLength(1);
    // The renewed session is checked again only after another interval, and ends when the first did.
    const renewed = cookiePair(due.cookies[0] as string);
    expect((await at(renewed, 299)).cookies).toEqual([]);
    expect(memberRoute()).toBe(2);
    expect(due.cookies[0]).toMatch(/Max-Age=28499;/);
  });

  it('refuses a member who left the guild from the next request after the re-check, reviewer or not', async () => {
    for (const user of [MEMBER, REVIEWER]) {
      const cookie = await signIn(user);
      expect((await at(cookie, 10)).viewer.kind).toBe('member');
      member = leftGuild;
      const refused = await at(cookie, 300);
      expect(refused.viewer).toEqual({ kind: 'stranger', userId: user, name: 'someone' });
      // The refusal is kept in the session (no token left in it): no more questions to Discord.
      const asked = memberRoute();
      const later = cookiePair(refused.cookies[0] as string);
      expect((await at(later, 301)).viewer.kind).toBe('stranger');
      expect((await at(later, 3600)).viewer.kind).toBe('stranger');
      expect(memberRoute()).toBe(asked);
      // Nor does the old cookie help: it is re-checked (and refused) again.
      expect((await at(cookie, 0)).viewer.kind).toBe('stranger');
      member = inGuild([ROLE]);
    }
  });

  it('refuses a member who lost the role', async () => {
    const cookie = await signIn(MEMBER);
    member = inGuild([]);
    expect((await at(cookie, 300)).viewer.kind).toBe('stranger');
  });

  it('ends the session when Discord refuses the token or does not answer', async () => {
    const cookie = await signIn(MEMBER);
    member = () => ({ status: 401, body: { message: '401: Unauthorized', code: 0 } });
    const revoked = await at(cookie, 300);
    expect(revoked.viewer).toEqual({ kind: 'anonymous', badToken: false });
    expect(revoked.cookies).toEqual([expect.stringMatching(new RegExp(`^${SESSION_COOKIE}=; .*Max-Age=0`))]);
    member = () => 'hang up';
    expect((await at(cookie, 0)).viewer).toEqual({ kind: 'anonymous', badToken: false });
  });

  it('does not let a reviewer who is not a member of the guild sign in', async () => {
    member = leftGuild;
    const cookie = await signIn(REVIEWER);
    expect((await at(cookie, 0)).viewer.kind).toBe('stranger');
  });
});
