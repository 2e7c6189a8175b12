import { eventually, NATS_URL, uniqueSuffix } from '@caseloop/testing';
import { connect, NatsConnection } from 'nats';

jest.setTimeout(60_000);

/**
 * What leases rely on, checked against this server (2.9): create only when absent, update only at
 * the expected revision, and silent bucket-wide expiry.
 */
describe('JetStream KV on this server', () => {
  let nc: NatsConnection;
  const bucket = uniqueSuffix('kv');
  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
  });
  afterAll(async () => {
    const jsm = await nc.jetstreamManager();
    for (const b of [bucket, `${bucket}ttl`]) await jsm.streams.delete(`KV_${b}`).catch(() => undefined);
    await nc.close();
  });

  it('creates only when absent; the revision is a fencing token for compare-and-set updates', async () => {
    const kv = await nc.jetstream().views.kv(bucket, { history: 1 });
    const enc = new TextEncoder();
    const granted = await kv.create('lease.browser.default', enc.encode('holder-a'));
    await expect(kv.create('lease.browser.default', enc.encode('holder-b'))).rejects.toThrow(
      /wrong last sequence/i,
    );
    const renewed = await kv.update('lease.browser.default', enc.encode('holder-a'), granted);
    expect(renewed).toBeGreaterThan(granted);
    // The old token is stale: a holder that lost the lease cannot write with it.
    await expect(kv.update('lease.browser.default', enc.encode('holder-a'), granted)).rejects.toThrow(
      /wrong last sequence/i,
    );
    const entry = await kv.get('lease.browser.default');
    expect(entry?.revision).toBe(renewed);
    expect(new TextDecoder().decode(entry?.value)).toBe('holder-a');
  });

  it('expires entries with the bucket TTL, silently (no per-key TTL or delete marker on 2.9)', async () => {
    const kv = await nc.jetstream().views.kv(`${bucket}ttl`, { ttl: 1_000 });
    await kv.put('k', new TextEncoder().encode('v'));
    expect(await kv.get('k')).not.toBeNull();
    await eventually(async () => (await kv.get('k')) === null, {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: 'expired',
    });
    // Gone, not marked: history holds nothing to tell a watcher it expired.
    const keys: string[] = [];
    for await (const k of await kv.keys()) keys.push(k);
    expect(keys).toEqual([]);
    // After expiry the key is absent again, so a fresh create succeeds.
    expect(await kv.create('k', new TextEncoder().encode('w'))).toBeGreaterThan(0);
  });
});
