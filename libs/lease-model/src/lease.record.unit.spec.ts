import { LeaseRecord, leaseKey, parseLeaseKey, queueKey, standingOf, tokenOf } from './lease.record';

const REV = 'e'.repeat(40);
const holder = {
  requestId: 'R1',
  caseId: 'C1',
  taskId: 'T1',
  revision: REV,
  correlationId: 'C1',
  position: 0,
};
const held: LeaseRecord = {
  status: 'held',
  resource: 'browser:default',
  holder,
  token: null,
  grantedAt: 1_000,
  expiresAt: 2_000,
  ttlMs: 1_000,
  renewals: 0,
  captureIds: [],
  takeoverOf: null,
};

describe('lease records', () => {
  it('name the two keys of a resource and parse them back', () => {
    expect(leaseKey('browser:default')).toBe('lease.browser.default');
    expect(queueKey('device:pixel-7')).toBe('queue.device.pixel-7');
    expect(parseLeaseKey('lease.browser.default')).toEqual({ kind: 'lease', resource: 'browser:default' });
    expect(parseLeaseKey('queue.device.pixel-7')).toEqual({ kind: 'queue', resource: 'device:pixel-7' });
    expect(parseLeaseKey('other.browser.default')).toBeNull();
    expect(() => leaseKey('browser.default')).toThrow(RangeError);
    expect(() => leaseKey('browser:*')).toThrow(RangeError);
  });

  it('take the token from the grant revision, then from the record once carried forward', () => {
    expect(tokenOf({ revision: 7, record: held })).toBe(7);
    expect(tokenOf({ revision: 9, record: { ...held, token: 7 } })).toBe(7);
  });

  it('answer "is token T still the holder?" from one read', () => {
    const slot = { revision: 9, record: { ...held, token: 7 } };
    expect(standingOf(slot, 7, 1_999)).toEqual({
      holder: true,
      standing: 'held',
      expiresAt: 2_000,
      currentToken: 7,
    });
    expect(standingOf(slot, 7, 2_000)).toEqual({
      holder: false,
      standing: 'expired',
      expiresAt: 2_000,
      currentToken: 7,
    });
    expect(standingOf(slot, 6, 1_500)).toEqual({
      holder: false,
      standing: 'foreign',
      expiresAt: null,
      currentToken: 7,
    });
    expect(standingOf(null, 7, 1_500)).toEqual({
      holder: false,
      standing: 'foreign',
      expiresAt: null,
      currentToken: null,
    });
    const released: LeaseRecord = {
      status: 'released',
      resource: 'browser:default',
      holder,
      token: 7,
      grantedAt: 1_000,
      expiresAt: 2_000,
      captureIds: [],
      releasedAt: 1_500,
    };
    expect(standingOf({ revision: 10, record: released }, 7, 1_600)).toMatchObject({
      holder: false,
      standing: 'released',
    });
  });
});
