import { createHash } from 'node:crypto';
import type { DiscordErrorName } from './errors';

/** The Discord JSON errors a fault may answer with: limits the real API hits that no test can reach otherwise. */
export const FAULT_ERRORS = ['maxOldMessageEdits'] as const satisfies readonly DiscordErrorName[];
export type FaultError = (typeof FAULT_ERRORS)[number];

/**
 * A fault a test injects into the REST API. `when: 'before'` (default) answers `status` without
 * doing anything; `when: 'after'` performs the request (the message is stored and dispatched) and
 * then answers `status`, which is how an ambiguous POST looks to a client. `error` answers one of
 * Discord's JSON errors (its HTTP status and code) instead of `status`. `delayMs` holds the
 * answer back: before the work by default, after it with `when: 'after'` (a client that times out
 * then has its message stored anyway). A rule fires `times` times (default 1).
 */
export interface FaultRule {
  method?: string;
  /** Matched against the path under /api/v10, e.g. `/channels/123/messages`. A string may use `:param` segments. */
  path: string | RegExp;
  status?: 429 | 500 | 502 | 503 | 504;
  /** A Discord JSON error to answer, e.g. `maxOldMessageEdits` (30046); wins over `status`. */
  error?: FaultError;
  when?: 'before' | 'after';
  times?: number;
  retryAfterMs?: number;
  /** 429 only: mark the limit global (X-RateLimit-Global). */
  global?: boolean;
  delayMs?: number;
}

export interface InjectedFault {
  readonly rule: Readonly<FaultRule>;
  /** How many more times this rule fires. */
  readonly remaining: number;
  /** How many times it has fired. */
  readonly fired: number;
  cancel(): void;
}

class FaultEntry implements InjectedFault {
  fired = 0;
  cancelled = false;
  constructor(readonly rule: Readonly<FaultRule>) {}
  get remaining(): number {
    return this.cancelled ? 0 : Math.max(0, (this.rule.times ?? 1) - this.fired);
  }
  cancel(): void {
    this.cancelled = true;
  }
  matches(method: string, path: string): boolean {
    if (this.remaining <= 0) return false;
    if (this.rule.method && this.rule.method.toUpperCase() !== method.toUpperCase()) return false;
    const pattern = this.rule.path;
    if (pattern instanceof RegExp) return pattern.test(path);
    if (!pattern.includes('/:')) return pattern === path;
    const want = pattern.split('/');
    const got = path.split('/');
    return want.length === got.length && want.every((seg, i) => seg.startsWith(':') || seg === got[i]);
  }
}

export class FaultInjector {
  private readonly entries: FaultEntry[] = [];

  add(rule: FaultRule): InjectedFault {
    const entry = new FaultEntry({ when: 'before', times: 1, ...rule });
    this.entries.push(entry);
    return entry;
  }

  /** Takes the first live rule matching the request and counts it as fired. */
  take(method: string, path: string): Readonly<FaultRule> | null {
    const entry = this.entries.find((e) => e.matches(method, path));
    if (!entry) return null;
    entry.fired += 1;
    return entry.rule;
  }

  clear(): void {
    for (const entry of this.entries) entry.cancel();
    this.entries.length = 0;
  }
}

export interface RateLimitSettings {
  /** Requests per window per bucket (route + major parameter), as X-RateLimit-Limit reports it. */
  limit: number;
  windowMs: number;
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  resetAt: number;
  resetAfterMs: number;
  bucket: string;
  exceeded: boolean;
}

/**
 * Fixed-window buckets keyed like Discord's: method + route template, split by the major parameter
 * (channel or guild id). The hash is stable per route, as clients cache it.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { resetAt: number; used: number }>();

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly now: () => number,
  ) {}

  /** Requests per window of every bucket. */
  get limit(): number {
    return this.settings.limit;
  }

  consume(method: string, route: string, majorParameter: string): RateLimitState {
    const now = this.now();
    const key = `${method} ${route} ${majorParameter}`;
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { resetAt: now + this.settings.windowMs, used: 0 };
      this.windows.set(key, window);
    }
    window.used += 1;
    return {
      limit: this.settings.limit,
      remaining: Math.max(0, this.settings.limit - window.used),
      resetAt: window.resetAt,
      resetAfterMs: window.resetAt - now,
      bucket: bucketHash(method, route),
      exceeded: window.used > this.settings.limit,
    };
  }
}

export const bucketHash = (method: string, route: string): string =>
  createHash('sha1').update(`${method} ${route}`).digest('hex').slice(0, 32);

export function rateLimitHeaders(
  state: Pick<RateLimitState, 'limit' | 'remaining' | 'resetAt' | 'resetAfterMs' | 'bucket'>,
): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(state.limit),
    'X-RateLimit-Remaining': String(state.remaining),
    'X-RateLimit-Reset': (state.resetAt / 1000).toFixed(3),
    'X-RateLimit-Reset-After': (Math.max(0, state.resetAfterMs) / 1000).toFixed(3),
    'X-RateLimit-Bucket': state.bucket,
  };
}
