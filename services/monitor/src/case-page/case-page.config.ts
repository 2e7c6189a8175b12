import { ConfigError } from '@caseloop/platform';
import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/**
 * The case page's keys, part of the monitor's one config schema. The page has its own listener so
 * that `/healthz` and `/metrics` can stay reachable to orchestrators on HTTP_HOST while the page,
 * which shows case titles and receipts, stays on loopback unless an operator says otherwise.
 */
export const casePageConfigShape = {
  /** The page's listener; unset: no page is served. 0 picks a free port (tests). */
  CASE_PAGE_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  CASE_PAGE_HOST: z.string().min(1).default('127.0.0.1'),
  /** Shared secret a viewer gives as the password of HTTP Basic auth or as a Bearer token. A secret. */
  CASE_PAGE_SECRET: z.string().min(16, 'at least 16 characters').optional(),
  /** The page is reached only through a reverse proxy that authenticates (allows a non-loopback host without a secret). */
  CASE_PAGE_AUTH_PROXY: bool.default(false),
  /** Where viewers reach the evidence service: thumbnails load from `<url>/evidence/cases/…` (a 302 to a short-lived presigned link). */
  EVIDENCE_PUBLIC_URL: z.url().optional(),
  /** Seconds between reloads of the case list (0: never). */
  CASE_PAGE_REFRESH_S: z.coerce.number().int().min(0).max(3600).default(30),
};
export const casePageSecrets = ['CASE_PAGE_SECRET'] as const;

export interface CasePageSettings {
  host: string;
  port: number;
  secret: string | null;
  authProxy: boolean;
  evidenceBaseUrl: string | null;
  refreshSeconds: number;
}

type CasePageConfig = {
  CASE_PAGE_PORT?: number | undefined;
  CASE_PAGE_HOST: string;
  CASE_PAGE_SECRET?: string | undefined;
  CASE_PAGE_AUTH_PROXY: boolean;
  EVIDENCE_PUBLIC_URL?: string | undefined;
  CASE_PAGE_REFRESH_S: number;
};

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost)$/;
export const isLoopback = (host: string): boolean => LOOPBACK.test(host);

/**
 * The page's settings, or null when it is off. A page bound beyond loopback must be guarded:
 * by the shared secret, or by an authenticating proxy the operator vouches for.
 */
export function casePageSettings(c: CasePageConfig): CasePageSettings | null {
  if (c.CASE_PAGE_PORT === undefined) return null;
  if (!isLoopback(c.CASE_PAGE_HOST) && c.CASE_PAGE_SECRET === undefined && !c.CASE_PAGE_AUTH_PROXY) {
    throw new ConfigError([
      {
        key: 'CASE_PAGE_SECRET',
        problem:
          'required when CASE_PAGE_HOST is not a loopback address (or set CASE_PAGE_AUTH_PROXY=true behind an authenticating proxy)',
      },
    ]);
  }
  return {
    host: c.CASE_PAGE_HOST,
    port: c.CASE_PAGE_PORT,
    secret: c.CASE_PAGE_SECRET ?? null,
    authProxy: c.CASE_PAGE_AUTH_PROXY,
    evidenceBaseUrl: c.EVIDENCE_PUBLIC_URL ? c.EVIDENCE_PUBLIC_URL.replace(/\/+$/, '') : null,
    refreshSeconds: c.CASE_PAGE_REFRESH_S,
  };
}
