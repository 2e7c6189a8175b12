import { RecordedEvent } from '@caseloop/contracts';
import { LeaseClient } from '@caseloop/lease-client';
import { eventually, NATS_URL } from '@caseloop/testing';
import { connect, NatsConnection, RequestOptions } from 'nats';
import { LeaseHarness, startLeaseHarness } from './testing/lease.harness';

/**
 * A grant made for a waiting client that lapses before the client claims it: the lease service
 * granted, died before the claim reached it, and its successor released the grant as unclaimed.
 * The client must put its request back in line (a restart costs seconds), not fail or wait out
 * its whole wait timeout. The client's connection is cut off from the lease service (or from
 * everything) exactly while that happens, so the claim cannot win the race by luck.
 */
jest.setTimeout(120_000);

const REV = 'cafe'.padEnd(40, '0');
const ask = (resource: string, caseId: string) => ({
  resource,
  caseId,
  taskId: `T${caseId}`,
  revision: REV,
  ttlMs: 60_000,
  waitTimeoutMs: 60_000,
});
const types = (events: RecordedEvent[]) => events.map((e) => e.type);

/** A connection whose requests fail as "no responders" while cut off (only lease RPCs, or all). */
function cuttable(nc: NatsConnection, namespace: string) {
  const state: { cut: 'none' | 'rpc' | 'all' } = { cut: 'none' };
  const proxy = new Proxy(nc, {
    get(target, prop, receiver) {
      if (prop === 'request')
        return (subject: string, data?: Uint8Array, opts?: RequestOptions) => {
          const blocked =
            state.cut === 'all' || (state.cut === 'rpc' && subject.startsWith(`${namespace}.lease-rpc.`));
          if (blocked) return Promise.reject(Object.assign(new Error('503'), { code: '503' }));
          return target.request(subject, data, opts);
        };
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(receiver) : v;
    },
  });
  return { nc: proxy, state };
}

let h: LeaseHarness;
/** The lease service now running: the harness's first, then each restart's. */
let running: { close(): Promise<void> };
const connections: NatsConnection[] = [];
beforeAll(async () => {
  h = await startLeaseHarness({ skewMs: 200, sweepIntervalMs: 50, claimMs: 1_000 });
  running = h.service;
});
afterAll(async () => {
  for (const nc of connections) if (!nc.isClosed()) await nc.close();
  await h?.cleanup();
});

async function cutClient() {
  const raw = await connect({ servers: NATS_URL, noAsyncTraces: true });
  connections.push(raw);
  const c = cuttable(raw, h.namespace);
  const client = await LeaseClient.connect(c.nc, {
    namespace: h.namespace,
    bucket: h.bucket,
    pollMs: 100,
    resendMs: 300,
  });
  return { client, state: c.state };
}

describe.each([
  // its late claim is refused, and recorded as such
  ['after it read the grant (its claim is refused)', 'rpc' as const, ['LeaseRefused']],
  ['before it read the grant (it reads the ended request)', 'all' as const, []],
])('a waiter whose grant lapsed unclaimed across a lease service restart, %s', (_what, cut, refused) => {
  it('re-queues and is granted within seconds of the restart', async () => {
    const resource = `browser:lapse-${cut}`;
    const [holderId, waiterId] = [`LH${cut}`, `LW${cut}`];
    const holder = await h.client.acquire(ask(resource, holderId));
    const b = await cutClient();
    let settled = false;
    const waiting = b.client.acquire(ask(resource, waiterId)).finally(() => {
      settled = true;
    });
    await eventually(async () => types(await h.events(waiterId)).includes('LeaseRequested'), {
      what: 'the waiter in line',
    });

    // The service grants the waiter, then goes down before the waiter's claim reaches it.
    b.state.cut = cut;
    await holder.release();
    await eventually(async () => types(await h.events(waiterId)).includes('LeaseGranted'), {
      what: 'the grant to the waiter',
    });
    await running.close();
    // Its successor finds the grant unclaimed past its claim window and releases it as unused.
    await new Promise((r) => setTimeout(r, 1_500));
    running = await h.replica();
    const released = await eventually(
      async () => (await h.events(waiterId)).find((e) => e.type === 'LeaseReleased'),
      { what: 'the unclaimed grant released' },
    );
    expect(released?.type === 'LeaseReleased' && released.data.unclaimed).toBe(true);
    expect(settled).toBe(false);

    // The waiter can reach the service again: it must put itself back in line and be granted.
    const reconnected = Date.now();
    b.state.cut = 'none';
    const lease = await waiting;
    expect(Date.now() - reconnected).toBeLessThan(10_000);
    const firstGrant = (await h.events(waiterId)).find((e) => e.type === 'LeaseGranted');
    expect(firstGrant?.type === 'LeaseGranted' && lease.token).toBeGreaterThan(
      firstGrant?.type === 'LeaseGranted' ? firstGrant.data.token : Infinity,
    );
    expect((await lease.check()).holder).toBe(true);
    expect(await lease.release()).toMatchObject({ standing: 'released' });
    expect(types(await h.events(waiterId))).toEqual([
      'LeaseRequested',
      'LeaseGranted',
      'LeaseReleased',
      ...refused,
      'LeaseRequested',
      'LeaseGranted',
      'LeaseReleased',
    ]);
  });
});
