import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ConsoleSettings, DiscordSignIn } from '../console.config';
import { admit, ConsoleAccess } from './console-access';
import { DiscordOAuthClient, pkcePair, SignInError } from './discord-oauth.client';
import { CookieSealer, CookieSigner, parseCookies, setCookie } from './signed-cookie';

export const SESSION_COOKIE = 'caseloop_console';
export const SIGN_IN_COOKIE = 'caseloop_console_sign_in';
const SIGN_IN_TTL_MS = 10 * 60_000;

/** Who is asking, as far as the console can tell from the request. */
export type Viewer =
  | { kind: 'open' }
  | { kind: 'token' }
  | { kind: 'member'; userId: string; name: string }
  | { kind: 'stranger'; userId: string; name: string }
  | { kind: 'anonymous'; badToken: boolean };

export interface RequestLike {
  headers: Record<string, string | string[] | undefined>;
}

const header = (req: RequestLike, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** What a request's viewer is, and the cookies to send back with the answer (a renewed or ended session). */
export interface Authenticated {
  viewer: Viewer;
  cookies: string[];
}

/**
 * Sign-in and sessions. The session cookie carries the Discord user id, a display name, whether
 * the binding admitted them, when Discord last confirmed it (`chk`) and the person's Discord token
 * sealed (`tok`), signed with the console's session secret. Every `membershipRecheckS` the next
 * request asks Discord again with that token: whoever left the guild or lost the role is refused
 * from that request on, and a token Discord no longer takes (or a Discord that does not answer)
 * ends the session.
 */
export class ConsoleAuth {
  private readonly signer: CookieSigner | null;
  private readonly sealer: CookieSealer | null;
  private readonly oauth: DiscordOAuthClient | null;
  private readonly tokenDigest: Buffer | null;

  constructor(
    private readonly settings: ConsoleSettings,
    private readonly access: ConsoleAccess | null,
    private readonly now: () => number = Date.now,
  ) {
    const s = settings.signIn;
    this.signer = s ? new CookieSigner(s.sessionSecret) : null;
    this.sealer = s ? new CookieSealer(s.sessionSecret) : null;
    this.oauth = s ? new DiscordOAuthClient(s) : null;
    this.tokenDigest = settings.apiToken === null ? null : digest(settings.apiToken);
  }

  get signInEnabled(): boolean {
    return this.settings.signIn !== null;
  }

  /** No sign-in and no token: the console answers anyone who reaches it on loopback. */
  get openOnLoopback(): boolean {
    return this.settings.signIn === null && this.settings.apiToken === null;
  }

  /** The viewer, after re-checking a signed-in member with Discord when the last check is old enough. */
  async authenticate(req: RequestLike): Promise<Authenticated> {
    const viewer = this.viewer(req);
    if (viewer.kind !== 'member') return { viewer, cookies: [] };
    const { s, signer, oauth } = this.ready();
    const session = this.session(req) as Record<string, unknown>;
    const now = this.now();
    const checked = typeof session.chk === 'number' ? session.chk : 0;
    if (now - checked < s.membershipRecheckS * 1000) return { viewer, cookies: [] };
    const exp = session.exp as number;
    const token = (this.sealer as CookieSealer).open(session.tok);
    let roles: string[] | null;
    try {
      if (token === null) throw new SignInError('identity_refused', 'no token to re-check with');
      roles = await oauth.memberRoles(token, (this.access as ConsoleAccess).guildId);
    } catch {
      // Discord no longer takes the token, or does not answer: sign in again.
      return {
        viewer: { kind: 'anonymous', badToken: false },
        cookies: [this.signOutCookie()],
      };
    }
    const admitted = admit(this.access as ConsoleAccess, viewer.userId, roles).admitted;
    const renewed = signer.sign(
      'session',
      // A refused person's token is dropped: nothing more to ask Discord until they sign in again.
      admitted
        ? { uid: viewer.userId, name: viewer.name, admitted, chk: now, tok: session.tok }
        : { uid: viewer.userId, name: viewer.name, admitted, chk: now },
      exp,
    );
    return {
      viewer: admitted ? viewer : { kind: 'stranger', userId: viewer.userId, name: viewer.name },
      cookies: [setCookie(SESSION_COOKIE, renewed, { maxAgeS: (exp - now) / 1000, secure: s.secureCookies })],
    };
  }

  private session(req: RequestLike): Record<string, unknown> | null {
    return this.signer === null
      ? null
      : this.signer.verify('session', parseCookies(header(req, 'cookie'))[SESSION_COOKIE], this.now());
  }

  viewer(req: RequestLike): Viewer {
    const auth = header(req, 'authorization');
    if (auth !== undefined && this.tokenDigest !== null) {
      let given: string | null = null;
      if (auth.startsWith('Bearer ')) given = auth.slice(7);
      else if (auth.startsWith('Basic ')) {
        const decoded = Buffer.from(auth.slice(6), 'base64').toString('utf8');
        given = decoded.slice(decoded.indexOf(':') + 1);
      }
      if (given !== null && timingSafeEqual(digest(given), this.tokenDigest)) return { kind: 'token' };
      return { kind: 'anonymous', badToken: true };
    }
    if (this.signer === null)
      return this.tokenDigest === null ? { kind: 'open' } : { kind: 'anonymous', badToken: false };
    const session = this.session(req);
    if (session && typeof session.uid === 'string' && typeof session.name === 'string') {
      return session.admitted === true
        ? { kind: 'member', userId: session.uid, name: session.name }
        : { kind: 'stranger', userId: session.uid, name: session.name };
    }
    return { kind: 'anonymous', badToken: false };
  }

  /** Starts a sign-in: where to send the browser, and the cookie that remembers state and verifier. */
  begin(returnTo: string): { location: string; cookie: string } {
    const { s, signer, oauth } = this.ready();
    const state = randomBytes(18).toString('base64url');
    const { verifier, challenge } = pkcePair();
    const value = signer.sign(
      'sign-in',
      { state, verifier, returnTo: safeReturn(returnTo) },
      this.now() + SIGN_IN_TTL_MS,
    );
    return {
      location: oauth.authorizeUrl(state, challenge),
      cookie: setCookie(SIGN_IN_COOKIE, value, {
        maxAgeS: SIGN_IN_TTL_MS / 1000,
        secure: s.secureCookies,
        path: '/auth',
      }),
    };
  }

  /**
   * Finishes a sign-in: the state must match the cookie's, the code is exchanged with the cookie's
   * verifier, then Discord says who the user is and which roles they hold in the binding's guild.
   */
  async complete(
    req: RequestLike,
    query: { code?: string; state?: string; error?: string },
  ): Promise<{ cookies: string[]; returnTo: string; admitted: boolean; name: string }> {
    const { s, signer, oauth } = this.ready();
    const clear = setCookie(SIGN_IN_COOKIE, '', { maxAgeS: 0, secure: s.secureCookies, path: '/auth' });
    const pending = signer.verify('sign-in', parseCookies(header(req, 'cookie'))[SIGN_IN_COOKIE], this.now());
    if (query.error !== undefined) throw new SignInError('denied', 'the sign-in was not approved on Discord');
    if (!pending || typeof pending.state !== 'string' || typeof pending.verifier !== 'string')
      throw new SignInError('state_mismatch', 'no sign-in is under way in this browser');
    if (typeof query.state !== 'string' || query.state !== pending.state || typeof query.code !== 'string')
      throw new SignInError('state_mismatch', 'the answer from Discord does not belong to this sign-in');
    const token = await oauth.exchange(query.code, pending.verifier);
    const who = await oauth.identity(token);
    const access = this.access as ConsoleAccess;
    const roles = await oauth.memberRoles(token, access.guildId);
    const admitted = admit(access, who.userId, roles).admitted;
    const now = this.now();
    const session = signer.sign(
      'session',
      {
        uid: who.userId,
        name: who.name.slice(0, 64),
        admitted,
        chk: now,
        // Kept (sealed) only for an admitted person: it is what the membership re-check asks with.
        ...(admitted ? { tok: (this.sealer as CookieSealer).seal(token) } : {}),
      },
      now + s.sessionTtlS * 1000,
    );
    return {
      cookies: [
        clear,
        setCookie(SESSION_COOKIE, session, { maxAgeS: s.sessionTtlS, secure: s.secureCookies }),
      ],
      returnTo: typeof pending.returnTo === 'string' ? safeReturn(pending.returnTo) : '/cases',
      admitted,
      name: who.name,
    };
  }

  signOutCookie(): string {
    return setCookie(SESSION_COOKIE, '', {
      maxAgeS: 0,
      secure: this.settings.signIn?.secureCookies ?? false,
    });
  }

  private ready(): { s: DiscordSignIn; signer: CookieSigner; oauth: DiscordOAuthClient } {
    const s = this.settings.signIn;
    if (!s || !this.signer || !this.oauth || !this.access) throw new Error('sign-in is not configured');
    return { s, signer: this.signer, oauth: this.oauth };
  }
}

/** Only a path of this console: never another origin (an open redirect). */
export function safeReturn(path: string): string {
  return /^\/(?!\/)[A-Za-z0-9/_.?=&%-]*$/.test(path) && !path.startsWith('/auth/') ? path : '/cases';
}
