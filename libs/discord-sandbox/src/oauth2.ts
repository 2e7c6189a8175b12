import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeHtml } from '@caseloop/discord-markdown';
import type { Json } from './world';
import type { Worlds } from './worlds';

/**
 * Discord's OAuth2 authorization code grant, as its developer documentation describes it:
 * `GET /oauth2/authorize` (a consent screen, then a redirect with `code` and `state`),
 * `POST /api/oauth2/token` (form-encoded; client secret by Basic auth or in the body; PKCE S256
 * `code_verifier` checked against the authorization's `code_challenge`), and the two user routes a
 * Bearer token may call: `GET /users/@me` (scope `identify`) and
 * `GET /users/@me/guilds/{guild.id}/member` (scope `guilds.members.read`).
 *
 * The sandbox has no signed-in browser user, so its consent screen lists the guild's people; a test
 * (or the sandbox launcher) can make it approve at once for one chosen user.
 */

const CODE_TTL_MS = 10 * 60_000;
const TOKEN_TTL_S = 604_800;
const SCOPES = new Set(['identify', 'email', 'guilds', 'guilds.members.read', 'connections', 'openid']);

interface Grant {
  clientId: string;
  userId: string;
  scopes: string[];
  redirectUri: string;
  challenge: string | null;
  challengeMethod: string | null;
  expiresAt: number;
}

interface AccessToken {
  userId: string;
  scopes: string[];
  expiresAt: number;
}

export interface OAuth2Deps {
  worlds: Worlds;
  applicationId: string;
  now: () => number;
}

export interface OAuth2Request {
  method: string;
  at: number;
  path: string;
  status: number;
  /** The OAuth2 `error` code when the answer was one. */
  error: string | null;
}

type Send = (status: number, body: unknown, headers?: Record<string, string>) => void;

export class OAuth2Routes {
  /** The application's client secret (the developer portal's "Reset Secret"). */
  readonly clientSecret = randomBytes(24).toString('base64url');
  readonly requests: OAuth2Request[] = [];
  private readonly redirectUris = new Set<string>();
  private readonly codes = new Map<string, Grant>();
  private readonly tokens = new Map<string, AccessToken>();
  private autoApproveUserId: string | null = null;
  /** The developer portal's "Public Client": the token route then takes PKCE without a client secret. */
  publicClient = false;

  constructor(private readonly deps: OAuth2Deps) {}

  /** Registers a redirect URI on the application, as the developer portal's OAuth2 page does. */
  addRedirectUri(uri: string): void {
    this.redirectUris.add(uri);
  }

  /** The consent screen approves at once for this user (null: show the screen). */
  autoApprove(userId: string | null): void {
    if (userId !== null) this.deps.worlds.primary.user(userId);
    this.autoApproveUserId = userId;
  }

  /** Whether a request belongs to these routes (authorize, token, or a Bearer-authorized user route). */
  handles(req: IncomingMessage, path: string): boolean {
    if (path === '/oauth2/authorize' || path === '/api/oauth2/authorize') return true;
    if (/^\/api(\/v\d+)?\/oauth2\/token$/.test(path)) return true;
    if (path === '/sandbox/oauth2/auto-approve') return true;
    return /^\/api(\/v\d+)?\/users\/(@|%40)me(\/|$)/.test(path) && isBearer(req.headers.authorization);
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<void> {
    const record: OAuth2Request = {
      method: req.method ?? 'GET',
      at: this.deps.now(),
      path,
      status: 0,
      error: null,
    };
    const send: Send = (status, body, headers = {}) => {
      record.status = status;
      if (body && typeof body === 'object' && 'error' in body) record.error = String(body.error);
      this.requests.push(record);
      if (this.requests.length > 500) this.requests.shift();
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, {
        'Content-Type': typeof body === 'string' ? 'text/html; charset=utf-8' : 'application/json',
        'Content-Length': Buffer.byteLength(text),
        'Cache-Control': 'no-store',
        ...headers,
      });
      res.end(text);
    };
    const raw = await readBody(req);
    if (path === '/sandbox/oauth2/auto-approve' && req.method === 'POST') {
      const body = parseJson(raw);
      const user = typeof body.user === 'string' ? body.user : null;
      try {
        this.autoApprove(user === null ? null : this.userIdOf(user));
      } catch {
        send(404, { message: 'Unknown User', code: 10013 });
        return;
      }
      send(200, { autoApprove: this.autoApproveUserId });
      return;
    }
    if (path.endsWith('/oauth2/authorize')) {
      if (req.method === 'GET') return this.authorize(url.searchParams, null, send);
      if (req.method === 'POST')
        return this.authorize(new URLSearchParams(raw.toString('utf8')), 'form', send);
    }
    if (path.endsWith('/oauth2/token') && req.method === 'POST') return this.token(req, raw, send);
    if (req.method === 'GET') return this.userRoute(req, path, send);
    send(405, { message: '405: Method Not Allowed', code: 0 });
  }

  private userIdOf(nameOrId: string): string {
    const world = this.deps.worlds.primary;
    if (world.users.has(nameOrId)) return nameOrId;
    const user = [...world.users.values()].find((u) => u.username === nameOrId);
    if (!user) throw new Error('unknown user');
    return user.id;
  }

  /**
   * The consent step. Errors about the client or the redirect URI are shown on Discord's own page
   * (never redirected, so a forged link cannot bounce a user anywhere); every other problem is sent
   * back to the redirect URI as `error`, with the request's `state`.
   */
  private authorize(q: URLSearchParams, from: 'form' | null, send: Send): void {
    const clientId = q.get('client_id') ?? '';
    const redirectUri = q.get('redirect_uri') ?? '';
    if (clientId !== this.deps.applicationId)
      return send(400, page('Unknown application', 'Invalid client_id.'));
    if (!this.redirectUris.has(redirectUri))
      return send(
        400,
        page('Invalid OAuth2 redirect_uri', 'The redirect_uri is not registered for this application.'),
      );
    const back = (params: Record<string, string>): void => {
      const target = new URL(redirectUri);
      for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
      const state = q.get('state');
      if (state !== null) target.searchParams.set('state', state);
      send(302, '', { Location: target.toString() });
    };
    if (q.get('response_type') !== 'code')
      return back({
        error: 'unsupported_response_type',
        error_description: 'The response type is not supported.',
      });
    const scopes = (q.get('scope') ?? '').split(/[ +]/).filter(Boolean);
    if (scopes.length === 0 || scopes.some((s) => !SCOPES.has(s)))
      return back({
        error: 'invalid_scope',
        error_description: 'The requested scope is invalid, unknown, or malformed.',
      });
    const challenge = q.get('code_challenge');
    const method = q.get('code_challenge_method');
    if (challenge !== null && method !== 'S256')
      return back({ error: 'invalid_request', error_description: 'Invalid code_challenge_method.' });
    if (challenge !== null && !/^[A-Za-z0-9_-]{43}$/.test(challenge))
      return back({ error: 'invalid_request', error_description: 'Invalid code_challenge.' });

    let userId = this.autoApproveUserId;
    if (from === 'form') {
      if (q.get('decision') !== 'authorize')
        return back({
          error: 'access_denied',
          error_description: 'The resource owner or authorization server denied the request',
        });
      userId = q.get('user_id');
    }
    if (userId === null || !this.deps.worlds.primary.users.has(userId)) {
      return send(200, this.consentPage(q, scopes));
    }
    const code = randomBytes(20).toString('base64url');
    this.codes.set(code, {
      clientId,
      userId,
      scopes,
      redirectUri,
      challenge,
      challengeMethod: method,
      expiresAt: this.deps.now() + CODE_TTL_MS,
    });
    back({ code });
  }

  private consentPage(q: URLSearchParams, scopes: string[]): string {
    const hidden = [...q.entries()]
      .filter(([k]) => k !== 'decision' && k !== 'user_id')
      .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
      .join('');
    const people = [...this.deps.worlds.primary.users.values()]
      .filter((u) => !u.bot)
      .map(
        (u) =>
          `<label><input type="radio" name="user_id" value="${escapeHtml(u.id)}" required> ${escapeHtml(u.username)}</label><br>`,
      )
      .join('');
    return page(
      'An external application wants to access your Discord account',
      `<p>It asks for: ${scopes.map(escapeHtml).join(', ')}</p><form method="post" action="/oauth2/authorize">${hidden}${people}` +
        `<button name="decision" value="authorize">Authorize</button> <button name="decision" value="cancel" formnovalidate>Cancel</button></form>`,
    );
  }

  private token(req: IncomingMessage, raw: Buffer, send: Send): void {
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      return send(400, { error: 'invalid_request', error_description: 'Unsupported content type' });
    const form = new URLSearchParams(raw.toString('utf8'));
    let clientId = form.get('client_id');
    let secret = form.get('client_secret');
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (basic) {
      const decoded = Buffer.from(basic, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      clientId = decodeURIComponent(decoded.slice(0, colon));
      secret = decodeURIComponent(decoded.slice(colon + 1));
    }
    const publicWithPkce = this.publicClient && secret === null && form.get('code_verifier') !== null;
    if (
      clientId !== this.deps.applicationId ||
      (!publicWithPkce && (secret === null || !sameSecret(secret, this.clientSecret)))
    )
      return send(401, { error: 'invalid_client' });
    if (form.get('grant_type') !== 'authorization_code')
      return send(400, { error: 'unsupported_grant_type' });
    const code = form.get('code') ?? '';
    const grant = this.codes.get(code);
    // A code is good once: any attempt, right or wrong, spends it.
    this.codes.delete(code);
    if (!grant || grant.expiresAt < this.deps.now() || grant.clientId !== clientId)
      return send(400, { error: 'invalid_grant', error_description: 'Invalid "code" in request.' });
    if (form.get('redirect_uri') !== grant.redirectUri)
      return send(400, { error: 'invalid_grant', error_description: 'Invalid "redirect_uri" in request.' });
    if (publicWithPkce && grant.challenge === null)
      return send(400, { error: 'invalid_grant', error_description: 'A public client must use PKCE.' });
    if (grant.challenge !== null) {
      const verifier = form.get('code_verifier') ?? '';
      const ok =
        /^[A-Za-z0-9._~-]{43,128}$/.test(verifier) &&
        createHash('sha256').update(verifier).digest('base64url') === grant.challenge;
      if (!ok)
        return send(400, {
          error: 'invalid_grant',
          error_description: 'Invalid "code_verifier" in request.',
        });
    }
    const accessToken = randomBytes(24).toString('base64url');
    this.tokens.set(accessToken, {
      userId: grant.userId,
      scopes: grant.scopes,
      expiresAt: this.deps.now() + TOKEN_TTL_S * 1000,
    });
    send(200, {
      token_type: 'Bearer',
      access_token: accessToken,
      expires_in: TOKEN_TTL_S,
      refresh_token: randomBytes(24).toString('base64url'),
      scope: grant.scopes.join(' '),
    });
  }

  private userRoute(req: IncomingMessage, path: string, send: Send): void {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const token = this.tokens.get(bearer);
    if (!token || token.expiresAt < this.deps.now())
      return send(401, { message: '401: Unauthorized', code: 0 });
    const rest = path.replace(/^\/api(\/v\d+)?\/users\/(@|%40)me/, '');
    const world = this.deps.worlds.primary;
    if (rest === '' || rest === '/') {
      if (!token.scopes.includes('identify')) return send(401, { message: '401: Unauthorized', code: 0 });
      return send(200, world.renderUser(world.user(token.userId)));
    }
    const member = /^\/guilds\/(\d+)\/member$/.exec(rest);
    if (member) {
      if (!token.scopes.includes('guilds.members.read'))
        return send(401, { message: '401: Unauthorized', code: 0 });
      const guild = this.deps.worlds.all.find((w) => w.guildId === member[1]);
      const user = guild?.users.get(token.userId);
      if (!guild || !user) return send(404, { message: 'Unknown Guild', code: 10004 });
      return send(200, guild.renderMember(user, true) as Json);
    }
    send(404, { message: '404: Not Found', code: 0 });
  }
}

const isBearer = (header: string | undefined): boolean => (header ?? '').startsWith('Bearer ');

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

function parseJson(raw: Buffer): Json {
  try {
    const v = JSON.parse(raw.toString('utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
  } catch {
    return {};
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 64 * 1024) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
