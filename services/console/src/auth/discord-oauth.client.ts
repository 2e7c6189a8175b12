import { createHash, randomBytes } from 'node:crypto';
import type { DiscordSignIn } from '../console.config';

export const SCOPES = 'identify guilds.members.read';

export interface DiscordIdentity {
  userId: string;
  name: string;
}

/** Why a sign-in failed; the message names the step, never a token or code. */
export class SignInError extends Error {
  constructor(
    readonly code: 'denied' | 'state_mismatch' | 'token_refused' | 'discord_unreachable' | 'identity_refused',
    message: string,
  ) {
    super(message);
    this.name = 'SignInError';
  }
}

/** A PKCE pair (RFC 7636, S256): the verifier stays with the console, the challenge goes to Discord. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * Discord's OAuth2 as the console uses it: the authorization URL, the code exchange with the PKCE
 * verifier, and the two reads a user token allows (`/users/@me`, the guild member route).
 */
export class DiscordOAuthClient {
  constructor(
    private readonly s: DiscordSignIn,
    private readonly timeoutMs = 10_000,
  ) {}

  authorizeUrl(state: string, challenge: string): string {
    const url = new URL(this.s.authorizeUrl);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.s.clientId,
      scope: SCOPES,
      state,
      redirect_uri: this.s.redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    return url.toString();
  }

  async exchange(code: string, verifier: string): Promise<string> {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.s.redirectUri,
      code_verifier: verifier,
    });
    const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
    if (this.s.clientSecret !== null) {
      const basic = `${encodeURIComponent(this.s.clientId)}:${encodeURIComponent(this.s.clientSecret)}`;
      headers.Authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
    } else form.set('client_id', this.s.clientId);
    const res = await this.call(`${this.s.apiUrl}/oauth2/token`, {
      method: 'POST',
      headers,
      body: form.toString(),
    });
    const body = (await res.json().catch(() => ({}))) as { access_token?: unknown; error?: unknown };
    if (res.status !== 200 || typeof body.access_token !== 'string')
      throw new SignInError(
        'token_refused',
        `Discord refused the code exchange (${String(body.error ?? res.status)})`,
      );
    return body.access_token;
  }

  async identity(token: string): Promise<DiscordIdentity> {
    const res = await this.call(`${this.s.apiUrl}/users/@me`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const body = (await res.json().catch(() => ({}))) as {
      id?: unknown;
      username?: unknown;
      global_name?: unknown;
    };
    if (res.status !== 200 || typeof body.id !== 'string')
      throw new SignInError('identity_refused', `Discord refused /users/@me (${res.status})`);
    const name = typeof body.global_name === 'string' ? body.global_name : String(body.username ?? body.id);
    return { userId: body.id, name };
  }

  /** The member's roles in the guild, or null when the user is not a member of it. */
  async memberRoles(token: string, guildId: string): Promise<string[] | null> {
    const res = await this.call(`${this.s.apiUrl}/users/@me/guilds/${guildId}/member`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    if (res.status === 404) return null;
    const body = (await res.json().catch(() => ({}))) as { roles?: unknown };
    if (res.status !== 200 || !Array.isArray(body.roles))
      throw new SignInError('identity_refused', `Discord refused the guild member route (${res.status})`);
    return body.roles.filter((r): r is string => typeof r === 'string');
  }

  private async call(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(this.timeoutMs) });
    } catch {
      throw new SignInError('discord_unreachable', 'Discord did not answer');
    }
  }
}
