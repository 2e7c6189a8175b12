import { LeaseQueue, LeaseRecord, LeaseSlot, LeaseWaiter, standingOf } from '@caseloop/lease-model';
import { Asker, decideLease, impliedFacts, LeaseCommand, LeaseDecision } from './lease.decider';
import { enqueue, lineUp } from './lease-queue';

const R = 'browser:default';
const REV = 'a'.repeat(40);
const T0 = Date.parse('2026-11-29T10:00:00.000Z');
const SKEW = 2_000;

const waiter = (n: number, over: Partial<LeaseWaiter> = {}): LeaseWaiter => ({
  requestId: `R${n}`,
  caseId: `C${n}`,
  taskId: `T${n}`,
  revision: REV,
  correlationId: `C${n}`,
  position: 0,
  ttlMs: 30_000,
  enqueuedAt: T0,
  deadline: T0 + 60_000,
  ...over,
});
const asker = (n: number): Asker => ({
  caseId: `C${n}`,
  taskId: `T${n}`,
  revision: REV,
  correlationId: `C${n}`,
});

/** given an entry, when a command, then a decision — and "applies" a write the way KV would. */
const CLAIM = 5_000;
function when(slot: LeaseSlot | null, c: LeaseCommand): LeaseDecision {
  return decideLease(c, slot);
}
function applied(
  d: LeaseDecision,
  newRevision: number,
): { slot: LeaseSlot; facts: ReturnType<Extract<LeaseDecision, { kind: 'write' }>['facts']> } {
  if (d.kind !== 'write') throw new Error(`expected a write, got ${d.kind}`);
  return { slot: { revision: newRevision, record: d.record }, facts: d.facts(d.record.token ?? newRevision) };
}
const grantCmd = (w: LeaseWaiter, now = T0): LeaseCommand => ({
  type: 'Grant',
  resource: R,
  waiter: w,
  now,
  skewMs: SKEW,
  claimMs: CLAIM,
});
const heldBy = (n: number, at: number, revision: number): LeaseSlot =>
  applied(when(null, grantCmd(waiter(n), at)), revision).slot;

describe('lease decider', () => {
  it('grants a free resource by create; the grant revision becomes the token', () => {
    const d = when(null, grantCmd(waiter(1)));
    expect(d).toMatchObject({
      kind: 'write',
      expectedRevision: 0,
      record: { status: 'held', token: null, expiresAt: T0 + 30_000 },
    });
    const { slot, facts } = applied(d, 7);
    expect(standingOf(slot, 7, T0 + 1)).toEqual({
      holder: true,
      standing: 'held',
      expiresAt: T0 + 30_000,
      currentToken: 7,
    });
    expect(facts.map((f) => f.event.type)).toEqual(['LeaseRequested', 'LeaseGranted']);
    expect(facts[0]).toMatchObject({
      caseId: 'C1',
      key: 'requested-R1',
      event: { data: { requestId: 'R1', position: 0 } },
    });
    expect(facts.slice(1)).toEqual([
      expect.objectContaining({
        caseId: 'C1',
        key: '7-granted',
        event: {
          type: 'LeaseGranted',
          data: expect.objectContaining({ token: 7, requestId: 'R1', expiresAt: '2026-11-29T10:00:30.000Z' }),
        },
      }),
    ]);
  });

  it('makes a second asker wait while the lease is held, even just past expiry within the skew margin', () => {
    const slot = heldBy(1, T0, 7);
    expect(when(slot, grantCmd(waiter(2), T0 + 10))).toEqual({ kind: 'wait' });
    expect(when(slot, grantCmd(waiter(2), T0 + 30_000 + SKEW))).toEqual({ kind: 'wait' });
  });

  it('takes over only after expiry plus skew, recording LeaseExpired for the old holder first', () => {
    const slot = heldBy(1, T0, 7);
    const d = when(slot, grantCmd(waiter(2), T0 + 30_000 + SKEW + 1));
    expect(d).toMatchObject({
      kind: 'write',
      expectedRevision: 7,
      record: { takeoverOf: { token: 7, holder: { caseId: 'C1' } } },
    });
    const { slot: next, facts } = applied(d, 9);
    expect(facts.map((f) => [f.caseId, f.event.type, f.key])).toEqual([
      ['C2', 'LeaseRequested', 'requested-R2'],
      ['C1', 'LeaseExpired', '7-expired'],
      ['C2', 'LeaseGranted', '9-granted'],
    ]);
    expect(facts[1]?.event.data).toMatchObject({
      token: 7,
      expiredAt: '2026-11-29T10:00:30.000Z',
      takenOverBy: 'R2',
    });
    expect(standingOf(next, 7, T0 + 40_000).standing).toBe('foreign');
  });

  it('grants after a release by compare-and-set on the released entry, with a larger token', () => {
    const released = applied(
      when(heldBy(1, T0, 7), {
        type: 'Release',
        resource: R,
        asker: asker(1),
        token: 7,
        captureIds: ['cap1'],
        now: T0 + 5,
      }),
      8,
    );
    expect(released.facts.map((f) => f.event)).toEqual([
      {
        type: 'LeaseReleased',
        data: { resource: R, taskId: 'T1', revision: REV, token: 7, captureIds: ['cap1'] },
      },
    ]);
    const d = when(released.slot, grantCmd(waiter(2), T0 + 6));
    expect(d).toMatchObject({ kind: 'write', expectedRevision: 8, record: { takeoverOf: null } });
    const granted = applied(d, 9);
    expect(granted.facts.map((f) => f.event.type)).toEqual(['LeaseRequested', 'LeaseGranted']);
    expect(standingOf(granted.slot, 9, T0 + 7).holder).toBe(true);
  });

  it('renews only for the holder with the current token, keeping the token', () => {
    const slot = heldBy(1, T0, 7);
    const d = when(slot, { type: 'Renew', resource: R, asker: asker(1), token: 7, now: T0 + 20_000 });
    const renewed = applied(d, 8);
    expect(renewed.slot.record).toMatchObject({ token: 7, expiresAt: T0 + 50_000, renewals: 1 });
    expect(standingOf(renewed.slot, 7, T0 + 45_000).holder).toBe(true);
    expect(renewed.facts[0]?.event).toEqual({
      type: 'LeaseRenewed',
      data: {
        resource: R,
        taskId: 'T1',
        revision: REV,
        token: 7,
        expiresAt: '2026-11-29T10:00:50.000Z',
        renewals: 1,
      },
    });

    const foreign = when(renewed.slot, {
      type: 'Renew',
      resource: R,
      asker: asker(2),
      token: 6,
      now: T0 + 21_000,
    });
    expect(foreign).toMatchObject({ kind: 'refuse', reason: 'not_holder' });
    expect(foreign.kind === 'refuse' && foreign.facts[0]).toMatchObject({
      caseId: 'C2',
      event: {
        type: 'LeaseRefused',
        data: { reason: 'not_holder', token: 6, operation: 'renew', taskId: 'T2' },
      },
    });
  });

  it('refuses a renewal after the recorded expiry', () => {
    const d = when(heldBy(1, T0, 7), {
      type: 'Renew',
      resource: R,
      asker: asker(1),
      token: 7,
      now: T0 + 30_000,
    });
    expect(d).toMatchObject({ kind: 'refuse', reason: 'expired' });
  });

  it('releases only for the holder; a repeated release changes nothing', () => {
    const slot = heldBy(1, T0, 7);
    expect(
      when(slot, { type: 'Release', resource: R, asker: asker(2), token: 3, captureIds: [], now: T0 + 1 }),
    ).toMatchObject({
      kind: 'refuse',
      reason: 'not_holder',
    });
    const released = applied(
      when(slot, { type: 'Release', resource: R, asker: asker(1), token: 7, captureIds: [], now: T0 + 1 }),
      8,
    );
    expect(
      when(released.slot, {
        type: 'Release',
        resource: R,
        asker: asker(1),
        token: 7,
        captureIds: [],
        now: T0 + 2,
      }),
    ).toEqual({
      kind: 'unchanged',
    });
    expect(standingOf(released.slot, 7, T0 + 3)).toMatchObject({ holder: false, standing: 'released' });
  });

  it('records a release that comes after the expiry as an expiry', () => {
    const d = when(heldBy(1, T0, 7), {
      type: 'Release',
      resource: R,
      asker: asker(1),
      token: 7,
      captureIds: ['late'],
      now: T0 + 31_000,
    });
    const { slot, facts } = applied(d, 8);
    expect(slot.record.status).toBe('expired');
    expect(facts.map((f) => f.event)).toEqual([
      {
        type: 'LeaseExpired',
        data: expect.objectContaining({ token: 7, captureIds: ['late'], takenOverBy: null }),
      },
    ]);
  });

  it('binds captures for the live holder only, idempotently', () => {
    const slot = heldBy(1, T0, 7);
    const bound = applied(
      when(slot, {
        type: 'BindCapture',
        resource: R,
        asker: asker(1),
        token: 7,
        captureId: 'cap1',
        now: T0 + 1,
      }),
      8,
    );
    expect(bound.slot.record).toMatchObject({ token: 7, captureIds: ['cap1'] });
    expect(bound.facts).toEqual([]);
    expect(
      when(bound.slot, {
        type: 'BindCapture',
        resource: R,
        asker: asker(1),
        token: 7,
        captureId: 'cap1',
        now: T0 + 2,
      }),
    ).toEqual({
      kind: 'unchanged',
    });
    expect(
      when(bound.slot, {
        type: 'BindCapture',
        resource: R,
        asker: asker(2),
        token: 5,
        captureId: 'x',
        now: T0 + 2,
      }),
    ).toMatchObject({
      kind: 'refuse',
      reason: 'not_holder',
    });
    expect(
      when(bound.slot, {
        type: 'BindCapture',
        resource: R,
        asker: asker(1),
        token: 7,
        captureId: 'cap2',
        now: T0 + 30_000,
      }),
    ).toMatchObject({
      kind: 'refuse',
      reason: 'expired',
    });
  });

  it('expires a lapsed lease in the sweep only after the skew margin', () => {
    const slot = heldBy(1, T0, 7);
    expect(when(slot, { type: 'Expire', resource: R, now: T0 + 30_000 + SKEW, skewMs: SKEW })).toEqual({
      kind: 'unchanged',
    });
    const { slot: expired, facts } = applied(
      when(slot, { type: 'Expire', resource: R, now: T0 + 32_001, skewMs: SKEW }),
      8,
    );
    expect(expired.record).toMatchObject({ status: 'expired', token: 7 });
    expect(facts.map((f) => [f.caseId, f.event.type])).toEqual([['C1', 'LeaseExpired']]);
    expect(standingOf(expired, 7, T0 + 32_002).standing).toBe('expired');
    // and the next grant is a plain compare-and-set on the expired entry, with no second LeaseExpired
    const next = applied(when(expired, grantCmd(waiter(2), T0 + 32_003)), 9);
    expect(next.facts.map((f) => f.event.type)).toEqual(['LeaseRequested', 'LeaseGranted']);
  });

  it('recognises a waiter that was already granted', () => {
    const slot = heldBy(1, T0, 7);
    expect(when(slot, grantCmd(waiter(1), T0 + 1))).toEqual({ kind: 'unchanged' });
    const released: LeaseSlot = {
      revision: 8,
      record: {
        ...(slot.record as LeaseRecord),
        status: 'released',
        token: 7,
        releasedAt: T0 + 2,
      } as LeaseRecord,
    };
    expect(when(released, grantCmd(waiter(1), T0 + 3))).toEqual({ kind: 'served' });
  });
});

describe('lease queue', () => {
  it('keeps arrival order and is idempotent per request', () => {
    let q = enqueue(null, R, waiter(1));
    expect(q.waiter.position).toBe(0);
    q = enqueue(q.queue, R, waiter(2));
    expect(q).toMatchObject({ waiter: { position: 1 }, added: true });
    expect(enqueue(q.queue, R, waiter(1))).toMatchObject({ waiter: { position: 0 }, added: false });
    expect(lineUp(q.queue, null, T0).head?.requestId).toBe('R1');
  });

  it('skips waiters past their deadline and those already served', () => {
    const q = [waiter(1), waiter(2, { deadline: T0 + 5 }), waiter(3)].reduce<LeaseQueue | null>(
      (acc, w) => enqueue(acc, R, w).queue,
      null,
    );
    const slot = heldBy(1, T0, 7);
    const l = lineUp(q, slot, T0 + 10);
    expect(l.served.map((w) => w.requestId)).toEqual(['R1']);
    expect(l.timedOut.map((w) => w.requestId)).toEqual(['R2']);
    expect(l.head?.requestId).toBe('R3');
  });
});

describe('implied facts', () => {
  it('rebuild exactly the facts the decision recorded, for reconciliation after a crash', () => {
    const slot = heldBy(1, T0, 7);
    const takeover = applied(when(slot, grantCmd(waiter(2, { position: 3 }), T0 + 40_000)), 9);
    expect(impliedFacts(takeover.slot)).toEqual(takeover.facts);
    const released = applied(
      when(takeover.slot, {
        type: 'Release',
        resource: R,
        asker: asker(2),
        token: 9,
        captureIds: ['c'],
        now: T0 + 40_001,
      }),
      10,
    );
    expect(impliedFacts(released.slot)).toEqual(released.facts);
    const expired = applied(
      when(heldBy(3, T0, 11), { type: 'Expire', resource: R, now: T0 + 40_000, skewMs: SKEW }),
      12,
    );
    expect(impliedFacts(expired.slot)).toEqual(expired.facts);
  });

  describe('claims', () => {
    const claim = (slot: LeaseSlot, n: number, token: number, now: number) =>
      when(slot, { type: 'Claim', resource: R, asker: asker(n), token, requestId: `R${n}`, now });
    const unclaimed = (slot: LeaseSlot, now: number) =>
      when(slot, { type: 'ReleaseUnclaimed', resource: R, now });

    it('gives a grant a claim deadline; a claim by its requester clears it, and a claimed grant is never released as unused', () => {
      const held = heldBy(1, T0, 7);
      expect(held.record).toMatchObject({ status: 'held', claimBy: T0 + CLAIM });
      const claimed = applied(claim(held, 1, 7, T0 + 100), 8);
      expect(claimed.slot.record).toMatchObject({ status: 'held', token: 7, claimBy: null });
      expect(claimed.facts).toEqual([]);
      expect(claim(claimed.slot, 1, 7, T0 + 200)).toEqual({ kind: 'unchanged' });
      expect(unclaimed(claimed.slot, T0 + CLAIM + 1)).toEqual({ kind: 'unchanged' });
    });

    it('releases a grant still unclaimed after its deadline, as unclaimed, with the same facts rebuilt from the entry', () => {
      const held = heldBy(1, T0, 7);
      expect(unclaimed(held, T0 + CLAIM)).toEqual({ kind: 'unchanged' });
      const released = applied(unclaimed(held, T0 + CLAIM + 1), 8);
      expect(released.slot.record).toMatchObject({ status: 'released', token: 7, unclaimed: true });
      expect(released.facts).toEqual([
        expect.objectContaining({
          caseId: 'C1',
          key: '7-released',
          event: { type: 'LeaseReleased', data: expect.objectContaining({ token: 7, unclaimed: true }) },
        }),
      ]);
      expect(impliedFacts(released.slot)).toEqual(released.facts);
      // the requester's late claim is refused: the grant is gone
      expect(claim(released.slot, 1, 7, T0 + CLAIM + 2)).toMatchObject({
        kind: 'refuse',
        reason: 'not_holder',
      });
    });

    it("refuses a claim by anyone but the grant's requester; a lapsed grant is left to expire", () => {
      const held = heldBy(1, T0, 7);
      expect(claim(held, 2, 7, T0 + 1)).toMatchObject({ kind: 'refuse', reason: 'not_holder' });
      expect(claim(held, 1, 6, T0 + 1)).toMatchObject({ kind: 'refuse', reason: 'not_holder' });
      expect(claim(held, 1, 7, T0 + 30_000)).toEqual({ kind: 'unchanged' });
    });
  });
});
