import { RecordedEvent } from '@caseloop/contracts';
import { LeaseError } from '@caseloop/leases';
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

it('keeps a grant through a lease service restart; on shutdown its waiters leave the line and hear unavailable', async () => {
  const a = await h.client.acquire(ask('CRA'));
  const waiting = h.client.acquire(ask('CRB')).then(
    () => null,
    (e: unknown) => e,
  );
  await eventually(async () => types(await h.events('CRB')).includes('LeaseRequested'), { what: 'B queued' });

  await h.service.close();
  const err = await waiting;
  expect(err).toBeInstanceOf(LeaseError);
  expect(err).toMatchObject({ code: 'unavailable' });
  // the grant lives in the bucket, not in the service
  expect((await a.check()).holder).toBe(true);
  // B left the line with the service that held its request: nobody is granted to a requester that stopped listening
  const evB = await h.events('CRB');
  expect(types(evB)).toEqual(['LeaseRequested', 'LeaseRefused']);
  expect(evB[1]?.type === 'LeaseRefused' && evB[1].data).toMatchObject({
    reason: 'withdrawn',
    operation: 'acquire',
  });

  await h.replica();
  expect(await a.release(['cap'])).toMatchObject({ standing: 'released' });
  const c = await h.client.acquire({ ...ask('CRC'), waitTimeoutMs: 0 });
  expect(c.token).toBeGreaterThan(a.token);
  await c.release();
  // the restarted service reconciled the entry without duplicating anything on A's case
  expect(types(await h.events('CRA'))).toEqual(['LeaseRequested', 'LeaseGranted', 'LeaseReleased']);
});
