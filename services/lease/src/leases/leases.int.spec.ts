import { RecordedEvent } from '@caseloop/contracts';
import { Lease, LeaseError, leaseKey, decodeLeaseRecord } from '@caseloop/lease-client';
import { eventually } from '@caseloop/testing';
import { LeaseHarness, startLeaseHarness } from './testing/lease.harness';

jest.setTimeout(90_000);

const REV = 'c0ffee'.padEnd(40, '0');
const SKEW = 200;
let h: LeaseHarness;
let n = 0;

/** A fresh resource and case/task ids per test: tests share one service but never a line. */
const fresh = () => {
  n++;
  return { resource: `browser:t${n}`, caseA: `CA${n}`, caseB: `CB${n}`, caseC: `CC${n}` };
};
const ask = (resource: string, caseId: string, over: { ttlMs?: number; waitTimeoutMs?: number } = {}) => ({
  resource,
  caseId,
  taskId: `T${caseId}`,
  revision: REV,
  ttlMs: over.ttlMs ?? 10_000,
  waitTimeoutMs: over.waitTimeoutMs ?? 20_000,
});
const types = (events: RecordedEvent[]) => events.map((e) => e.type);
const ofType = <T extends RecordedEvent['type']>(events: RecordedEvent[], type: T) =>
  events.filter((e): e is Extract<RecordedEvent, { type: T }> => e.type === type);

/** Tracks whether a promise settled, so a test can assert a waiter is still waiting. */
function track<T>(p: Promise<T>) {
  const t = { settled: false, value: undefined as T | undefined, promise: p };
  p.then(
    (v) => {
      t.settled = true;
      t.value = v;
    },
    () => {
      t.settled = true;
    },
  );
  return t;
}

beforeAll(async () => {
  h = await startLeaseHarness({ skewMs: SKEW, sweepIntervalMs: 50 });
});
afterAll(async () => {
  await h?.cleanup();
});

describe('the lease service', () => {
  it('is healthy and exports lease metrics', async () => {
    const health = await fetch(`${h.service.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ service: 'lease', status: 'ready' });
    expect(await (await fetch(`${h.service.url}/metrics`)).text()).toContain('caseloop_lease_grants_total');
  });

  it('makes the second task wait until the first releases; tokens differ and grow', async () => {
    const { resource, caseA, caseB } = fresh();
    const a = await h.client.acquire(ask(resource, caseA));
    expect(await a.check()).toEqual({
      holder: true,
      standing: 'held',
      expiresAt: a.expiresAt,
      currentToken: a.token,
    });

    const b = track(h.client.acquire(ask(resource, caseB)));
    await eventually(async () => ofType(await h.events(caseB), 'LeaseRequested').length === 1, {
      what: 'B queued',
    });
    // position counts the waiters ahead in line; the holder is not in line
    expect(ofType(await h.events(caseB), 'LeaseRequested')[0]?.data.position).toBe(0);
    expect(b.settled).toBe(false);
    expect((await a.check()).holder).toBe(true);

    expect(await a.release(['capA1'])).toMatchObject({ holder: false, standing: 'released' });
    const granted = (await b.promise) as Lease;
    expect(granted.token).toBeGreaterThan(a.token);
    expect((await granted.check()).holder).toBe(true);
    expect(await a.check()).toMatchObject({
      holder: false,
      standing: 'foreign',
      currentToken: granted.token,
    });

    const evA = await h.events(caseA);
    expect(types(evA)).toEqual(['LeaseRequested', 'LeaseGranted', 'LeaseReleased']);
    expect(ofType(evA, 'LeaseGranted')[0]?.data).toMatchObject({
      resource,
      token: a.token,
      taskId: `T${caseA}`,
      revision: REV,
    });
    expect(ofType(evA, 'LeaseReleased')[0]?.data).toMatchObject({ token: a.token, captureIds: ['capA1'] });
    expect(
      evA.every((e) => e.producer === 'lease' && e.subject === `${h.namespace}.case.${caseA}.lease`),
    ).toBe(true);
    expect(types(await h.events(caseB))).toEqual(['LeaseRequested', 'LeaseGranted']);
    await granted.release();
  });

  it('refuses a renewal by anyone but the current holder, and renews the holder with the same token', async () => {
    const { resource, caseA, caseB } = fresh();
    const a = await h.client.acquire(ask(resource, caseA));
    await a.release();
    const b = await h.client.acquire(ask(resource, caseB, { ttlMs: 5_000 }));

    expect(await a.renew()).toMatchObject({ holder: false, standing: 'foreign' });
    const refused = await eventually(async () => ofType(await h.events(caseA), 'LeaseRefused')[0], {
      what: 'LeaseRefused',
    });
    expect(refused?.data).toMatchObject({ reason: 'not_holder', operation: 'renew', token: a.token });

    const before = b.expiresAt;
    const renewed = await b.renew(20_000);
    expect(renewed).toMatchObject({ holder: true, standing: 'held', currentToken: b.token });
    expect(b.expiresAt).toBeGreaterThan(before);
    expect(ofType(await h.events(caseB), 'LeaseRenewed')[0]?.data).toMatchObject({
      token: b.token,
      renewals: 1,
    });
    expect((await b.check()).holder).toBe(true);
    await b.release();
  });

  it('voids a lease that expires: check says not holder, the next waiter is granted, LeaseExpired is on the case', async () => {
    const { resource, caseA, caseB } = fresh();
    const a = await h.client.acquire(ask(resource, caseA, { ttlMs: 400 }));
    const b = track(h.client.acquire(ask(resource, caseB)));
    const lease = (await b.promise) as Lease;
    const grantedAt = Date.now();
    expect(grantedAt).toBeGreaterThan(a.expiresAt + SKEW);
    expect(await a.check()).toMatchObject({ holder: false, standing: 'foreign' });
    expect((await lease.check()).holder).toBe(true);

    const expired = ofType(await h.events(caseA), 'LeaseExpired');
    expect(expired).toHaveLength(1);
    expect(expired[0]?.data).toMatchObject({
      token: a.token,
      expiredAt: new Date(a.expiresAt).toISOString(),
      takenOverBy: lease.requestId,
    });
    // a capture or a release by the lapsed holder is refused
    expect(await a.bindCapture('late-capture')).toMatchObject({ holder: false });
    expect(await a.release(['late-capture'])).toMatchObject({ holder: false, standing: 'foreign' });
    await lease.release();
  });

  it('expires a lapsed lease nobody waits for, from the sweep', async () => {
    const { resource, caseC } = fresh();
    const c = await h.client.acquire(ask(resource, caseC, { ttlMs: 200 }));
    const expired = await eventually(async () => ofType(await h.events(caseC), 'LeaseExpired')[0], {
      what: 'LeaseExpired',
    });
    expect(expired?.data).toMatchObject({ token: c.token, takenOverBy: null });
    expect(Date.parse(expired?.occurredAt ?? '')).toBeGreaterThan(c.expiresAt + SKEW);
    expect(await c.check()).toMatchObject({ holder: false, standing: 'expired' });
    expect(await c.renew()).toMatchObject({ holder: false, standing: 'expired' });
    // the next acquisition is a compare-and-set on the expired entry
    const next = await h.client.acquire(ask(resource, 'CNEXT1', { waitTimeoutMs: 0 }));
    expect(next.token).toBeGreaterThan(c.token);
    await next.release();
  });

  it('keeps exactly one holder among 10 concurrent acquirers, in arrival order of grants', async () => {
    const { resource } = fresh();
    let inside = 0;
    let maxInside = 0;
    const tokens: number[] = [];
    const released: Lease[] = [];
    let violations = 0;
    const worker = async (i: number) => {
      const lease = await h.client.acquire(
        ask(resource, `CM${n}x${i}`, { ttlMs: 60_000, waitTimeoutMs: 60_000 }),
      );
      inside++;
      maxInside = Math.max(maxInside, inside);
      tokens.push(lease.token);
      for (let k = 0; k < 5; k++) {
        if (!(await lease.check()).holder) violations++;
        // every earlier holder must read as not holding while this one holds
        for (const old of released) if ((await old.check()).holder) violations++;
      }
      inside--;
      await lease.release([`cap-${i}`]);
      released.push(lease);
    };
    await Promise.all(Array.from({ length: 10 }, (_, i) => worker(i)));
    expect({ maxInside, violations, grants: tokens.length }).toEqual({
      maxInside: 1,
      violations: 0,
      grants: 10,
    });
    expect([...tokens].sort((x, y) => x - y)).toEqual(tokens);
    expect(new Set(tokens).size).toBe(10);
    for (const lease of released) expect((await lease.check()).holder).toBe(false);
    const all = await Promise.all(Array.from({ length: 10 }, (_, i) => h.events(`CM${n}x${i}`)));
    expect(all.map(types)).toEqual(
      Array.from({ length: 10 }, () => ['LeaseRequested', 'LeaseGranted', 'LeaseReleased']),
    );
  });

  it('binds captures for the holder only and reports them on release', async () => {
    const { resource, caseA, caseB } = fresh();
    const a = await h.client.acquire(ask(resource, caseA));
    expect(await a.bindCapture('capA1')).toMatchObject({ holder: true, standing: 'held' });
    expect(await a.bindCapture('capA1')).toMatchObject({ holder: true });
    await a.release(['capA2']);
    expect(ofType(await h.events(caseA), 'LeaseReleased')[0]?.data.captureIds).toEqual(['capA1', 'capA2']);

    const b = await h.client.acquire(ask(resource, caseB));
    expect(await a.bindCapture('capA3')).toMatchObject({ holder: false, standing: 'foreign' });
    const refusal = ofType(await h.events(caseA), 'LeaseRefused')[0];
    expect(refusal?.data).toMatchObject({ reason: 'not_holder', operation: 'bind_capture', token: a.token });
    expect(await b.bindCapture('capB1')).toMatchObject({ holder: true });
    const entry = await (await h.reader.js.views.kv(h.bucket, { bindOnly: true })).get(leaseKey(resource));
    expect(entry && decodeLeaseRecord(entry.value)).toMatchObject({
      status: 'held',
      token: b.token,
      captureIds: ['capB1'],
    });
    await b.release();
  });

  it('takes over from a crashed holder only after its expiry plus the skew margin', async () => {
    const { resource, caseA, caseB } = fresh();
    const crashing = await h.newClient();
    const a = await crashing.client.acquire(ask(resource, caseA, { ttlMs: 600 }));
    await crashing.nc.close();

    const b = track(h.client.acquire(ask(resource, caseB)));
    await eventually(async () => ofType(await h.events(caseB), 'LeaseRequested').length === 1, {
      what: 'B queued',
    });
    // still waiting while the crashed grant is inside its expiry
    if (Date.now() < a.expiresAt) expect(b.settled).toBe(false);
    const lease = (await b.promise) as Lease;
    const grant = ofType(await h.events(caseB), 'LeaseGranted')[0];
    const entry = await (await h.reader.js.views.kv(h.bucket, { bindOnly: true })).get(leaseKey(resource));
    const record = entry ? decodeLeaseRecord(entry.value) : null;
    expect(record?.grantedAt).toBeGreaterThan(a.expiresAt + SKEW);
    expect(record).toMatchObject({
      status: 'held',
      takeoverOf: { token: a.token, holder: { caseId: caseA } },
    });
    expect(grant?.data.token).toBe(lease.token);
    expect(ofType(await h.events(caseA), 'LeaseExpired')[0]?.data).toMatchObject({
      token: a.token,
      takenOverBy: lease.requestId,
    });
    await lease.release();
  });

  it('refuses a waiter whose wait timeout runs out, on its case', async () => {
    const { resource, caseA, caseC } = fresh();
    const a = await h.client.acquire(ask(resource, caseA));
    await expect(h.client.acquire(ask(resource, caseC, { waitTimeoutMs: 300 }))).rejects.toMatchObject({
      code: 'queue_timeout',
    });
    expect(ofType(await h.events(caseC), 'LeaseRefused')[0]?.data).toMatchObject({
      reason: 'queue_timeout',
      operation: 'acquire',
      token: null,
    });
    // the refused waiter left the line: the release grants nobody, the next asker gets it at once
    await a.release();
    const next = await h.client.acquire(ask(resource, `${caseC}x`, { waitTimeoutMs: 0 }));
    expect(next.token).toBeGreaterThan(a.token);
    await next.release();
  });

  it('answers a malformed request with invalid_request naming fields only', async () => {
    const err = await h.client
      .acquire({ ...ask('browser:x', 'C1'), resource: 'not a resource' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseError);
    expect(err).toMatchObject({ code: 'invalid_request' });
    expect((err as Error).message).toContain('resource');
    expect((err as Error).message).not.toContain('not a resource');
  });
});
