import { RecordedEvent } from '@caseloop/contracts';
import { encodeRecord, Lease, leaseKey, LeaseRecord } from '@caseloop/lease-client';
import { eventually } from '@caseloop/testing';
import { LeaseHarness, startLeaseHarness } from './testing/lease.harness';

jest.setTimeout(90_000);

const REV = 'd00d'.padEnd(40, '0');
let h: LeaseHarness;

const ask = (resource: string, caseId: string, over: { ttlMs?: number; waitTimeoutMs?: number } = {}) => ({
  resource,
  caseId,
  taskId: `T${caseId}`,
  revision: REV,
  ttlMs: over.ttlMs ?? 10_000,
  waitTimeoutMs: over.waitTimeoutMs ?? 30_000,
});
const types = (events: RecordedEvent[]) => events.map((e) => e.type);

beforeAll(async () => {
  // two lease services share the line and the bucket; NATS hands each request to one of them
  h = await startLeaseHarness({ skewMs: 200, sweepIntervalMs: 50 });
  await h.replica();
});
afterAll(async () => {
  await h?.cleanup();
});

describe('two lease service replicas on one bucket', () => {
  it('grant in arrival order (first come, first served)', async () => {
    const resource = 'browser:fifo';
    const a = await h.client.acquire(ask(resource, 'CFA'));
    const order: string[] = [];
    const waiting: Promise<Lease>[] = [];
    for (const c of ['CFB', 'CFC', 'CFD']) {
      const p = h.client.acquire(ask(resource, c));
      waiting.push(
        p.then((l) => {
          order.push(c);
          return l;
        }),
      );
      // arrival order is the order their requests joined the line
      await eventually(async () => types(await h.events(c)).includes('LeaseRequested'), {
        what: `${c} queued`,
      });
    }
    await a.release();
    for (const p of waiting) await (await p).release();
    expect(order).toEqual(['CFB', 'CFC', 'CFD']);
    const positions = await Promise.all(
      ['CFB', 'CFC', 'CFD'].map(async (c) => (await h.events(c)).find((e) => e.type === 'LeaseRequested')),
    );
    expect(positions.map((e) => (e?.type === 'LeaseRequested' ? e.data.position : -1))).toEqual([0, 1, 2]);
  });

  it('keep one holder at a time among 10 concurrent acquirers served by either replica', async () => {
    const resource = 'browser:many';
    let inside = 0;
    let maxInside = 0;
    let violations = 0;
    const tokens: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const lease = await h.client.acquire(
          ask(resource, `CR${i}`, { ttlMs: 60_000, waitTimeoutMs: 60_000 }),
        );
        inside++;
        maxInside = Math.max(maxInside, inside);
        tokens.push(lease.token);
        for (let k = 0; k < 3; k++) if (!(await lease.check()).holder) violations++;
        inside--;
        await lease.release();
      }),
    );
    expect({ maxInside, violations, grants: tokens.length }).toEqual({
      maxInside: 1,
      violations: 0,
      grants: 10,
    });
    expect([...tokens].sort((x, y) => x - y)).toEqual(tokens);
    for (let i = 0; i < 10; i++) {
      expect(types(await h.events(`CR${i}`))).toEqual(['LeaseRequested', 'LeaseGranted', 'LeaseReleased']);
    }
  });

  it('record what a lease entry says happened when the append was lost (a crash between compare-and-set and append)', async () => {
    const resource = 'browser:orphan';
    const now = Date.now();
    const record: LeaseRecord = {
      status: 'held',
      resource,
      holder: {
        requestId: 'RORPHAN',
        caseId: 'CORPHAN',
        taskId: 'TORPHAN',
        revision: REV,
        correlationId: 'CORPHAN',
        position: 0,
      },
      token: null,
      grantedAt: now,
      expiresAt: now + 300,
      ttlMs: 300,
      renewals: 0,
      captureIds: [],
      takeoverOf: null,
    };
    const kv = await h.reader.js.views.kv(h.bucket, { bindOnly: true });
    const token = await kv.create(leaseKey(resource), encodeRecord(record));
    const events = await eventually(
      async () => {
        const ev = await h.events('CORPHAN');
        if (ev.length < 3) throw new Error(`${ev.length} events so far`);
        return ev;
      },
      { what: 'reconciled grant, then the expiry from the sweep' },
    );
    expect(types(events)).toEqual(['LeaseRequested', 'LeaseGranted', 'LeaseExpired']);
    expect(events[1]?.type === 'LeaseGranted' && events[1].data.token).toBe(token);
    // both replicas saw the entry; each fact is in the ledger once
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
  });
});
