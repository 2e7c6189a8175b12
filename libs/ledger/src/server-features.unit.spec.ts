import { atLeast, serverFeatures } from './server-features';

describe('server feature gates', () => {
  it.each([
    [
      '2.9.10',
      { aggregateConcurrency: false, syncAlways: false, replicatedConcurrency: false, termWithReason: false },
    ],
    ['2.9.21', { aggregateConcurrency: false, syncAlways: false, replicatedConcurrency: true }],
    [
      '2.10.23',
      { aggregateConcurrency: false, syncAlways: true, replicatedConcurrency: true, termWithReason: true },
    ],
    ['2.11.0', { aggregateConcurrency: true, syncAlways: true, replicatedConcurrency: true }],
    ['v2.12.1-beta', { aggregateConcurrency: true, syncAlways: true, replicatedConcurrency: true }],
  ])('%s', (version, expected) => {
    expect(serverFeatures(version)).toMatchObject(expected);
  });

  it('compares numerically, not as text', () => {
    expect(atLeast('2.10.0', '2.9.21')).toBe(true);
    expect(atLeast('2.9.9', '2.9.21')).toBe(false);
  });

  it('refuses a version it cannot read rather than guessing', () => {
    expect(() => serverFeatures('unknown')).toThrow(/feature_unsupported/);
  });
});
