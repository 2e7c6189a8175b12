import { randomBytes } from 'node:crypto';

/**
 * Test support shared by every tier. Int tests talk to the real NATS and Postgres on loopback;
 * each test isolates itself with a unique namespace (NATS subjects, stream, KV bucket, Postgres schema).
 */
export const NATS_URL = process.env.CASELOOP_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
export const PG_URL = process.env.CASELOOP_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh lower-case token usable as a subject token, stream suffix, bucket or schema name. */
export const uniqueSuffix = (prefix = 't'): string =>
  `${prefix}${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;

/** Polls until `probe` stops throwing (or returns a truthy value); never a fixed sleep. */
export async function eventually<T>(
  probe: () => T | Promise<T>,
  {
    timeoutMs = 10_000,
    intervalMs = 25,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== false && v !== undefined && v !== null) return v;
      last = new Error(`${what} returned ${String(v)}`);
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `eventually(${what}) timed out after ${timeoutMs} ms: ${(last as Error)?.message ?? last}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
export * from './local-s3';
export * from './nats-cluster';
