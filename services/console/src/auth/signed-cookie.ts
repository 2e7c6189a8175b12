import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Values kept in the browser, signed so the console can trust what comes back: `<payload>.<mac>`,
 * the payload base64url JSON with an expiry, the MAC HMAC-SHA256 over the payload under a purpose
 * ("session", "sign-in"), so a cookie signed for one use is refused for another.
 */
export class CookieSigner {
  constructor(private readonly secret: string) {}

  sign(purpose: string, value: Record<string, unknown>, expiresAtMs: number): string {
    const payload = Buffer.from(JSON.stringify({ ...value, exp: expiresAtMs }), 'utf8').toString('base64url');
    return `${payload}.${this.mac(purpose, payload)}`;
  }

  /** The value, or null when the cookie is malformed, tampered with, for another purpose or expired. */
  verify(purpose: string, cookie: string | undefined, nowMs: number): Record<string, unknown> | null {
    if (!cookie) return null;
    const dot = cookie.indexOf('.');
    if (dot <= 0) return null;
    const payload = cookie.slice(0, dot);
    const given = Buffer.from(cookie.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.mac(purpose, payload), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
    const exp = (value as { exp?: unknown }).exp;
    if (typeof exp !== 'number' || exp <= nowMs) return null;
    return value as Record<string, unknown>;
  }

  private mac(purpose: string, payload: string): string {
    return createHmac('sha256', this.secret).update(`${purpose}\n${payload}`).digest('base64url');
  }
}

/**
 * A value the browser carries but must not be able to read (the person's Discord token, for the
 * membership re-check): AES-256-GCM under a key derived from the session secret.
 */
export class CookieSealer {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update('caseloop console: sealed cookie values').digest();
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The value, or null when the sealed text is malformed or was not sealed with this key. */
  open(sealed: unknown): string | null {
    if (typeof sealed !== 'string') return null;
    const raw = Buffer.from(sealed, 'base64url');
    if (raw.length < 29) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}

/** Cookies of a request header, by name (the first of a repeated name wins). */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (name in out) continue;
    try {
      out[name] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      continue;
    }
  }
  return out;
}

export interface CookieOptions {
  maxAgeS: number;
  secure: boolean;
  path?: string;
}

/** A `Set-Cookie` value: HttpOnly, SameSite=Lax (the redirect back from Discord is a top-level GET). */
export function setCookie(name: string, value: string, o: CookieOptions): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    `Path=${o.path ?? '/'}`,
    `Max-Age=${Math.max(0, Math.floor(o.maxAgeS))}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(o.secure ? ['Secure'] : []),
  ].join('; ');
}
