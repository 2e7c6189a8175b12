import { RecordedEvent } from '@caseloop/contracts';
import { eventually } from '@caseloop/testing';
import { LeaseHarness, startLeaseHarness } from './testing/lease.harness';

jest.setTimeout(90_000);

const REV = 'fade'.padEnd(40, '0');
const ask = (caseId: string) => ({
  resource: 'browser:restart',
  caseId,
  taskId: `T${caseId}`,
  revision: REV,
  ttlMs: 30_000,
  waitTimeoutMs: 30_000,
});
const types = (events: RecordedEvent[]) => events.map((e) => e.type);

let h: LeaseHarness;
beforeAll(async () => {
  h = await startLeaseHarness({ skewMs: 200, sweepIntervalMs: 50 });
});
afterAll(async () => {
  await h?.cleanup();
});

it('keeps a grant and the line through a lease service restart: the waiter is granted by the restarted service', async () => {
  const a = await h.client.acquire(ask('CRA'));
  let settled = false;
  const waiting = h.client.acquire(ask('CRB')).finally(() => {
    settled = true;
  });
  await eventually(async () => types(await h.events('CRB')).includes('LeaseRequested'), { what: 'B queued' });

  await h.service.close();
  // the grant and the line live in the bucket, not in the service
  expect((await a.check()).holder).toBe(true);
  expect(settled).toBe(false);

  await h.replica();
  expect(await a.release(['cap'])).toMatchObject({ standing: 'released' });
  const b = await waiting;
  expect(b.token).toBeGreaterThan(a.token);
  expect((await b.check()).holder).toBe(true);
  await b.release();
  const c = await h.client.acquire({ ...ask('CRC'), waitTimeoutMs: 0 });
  expect(c.token).toBeGreaterThan(b.token);
  await c.release();
  // the restarted service reconciled the entry without duplicating anything on A's case
  expect(types(await h.events('CRA'))).toEqual(['LeaseRequested', 'LeaseGranted', 'LeaseReleased']);
  expect(types(await h.events('CRB'))).toEqual(['LeaseRequested', 'LeaseGranted', 'LeaseReleased']);
});
