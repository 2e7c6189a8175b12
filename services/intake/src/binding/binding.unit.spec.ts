import { BindingError, parseBinding } from './binding.schema';

const valid = () => ({
  guildId: '100',
  channels: [{ id: '200', mode: 'open' }],
  reporters: ['300'],
  reviewers: ['400'],
  limits: { inboundMaxChars: 4000, reportsPerDayPerUser: 20, replyChunkSize: 2000 },
});

const refusal = (doc: unknown): BindingError => {
  try {
    parseBinding(doc);
  } catch (e) {
    if (e instanceof BindingError) return e;
    throw e;
  }
  throw new Error('binding was accepted');
};

describe('binding', () => {
  it('accepts a complete binding and defaults reporter roles to none', () => {
    const b = parseBinding(valid());
    expect(b.reporterRoles).toEqual([]);
    expect(b.channels[0]).toEqual({ id: '200', mode: 'open' });
  });

  it('accepts roles instead of listed reporters', () => {
    const doc = { ...valid(), reporters: undefined, reporterRoles: ['500'] };
    expect(parseBinding(doc).reporterRoles).toEqual(['500']);
  });

  it('refuses unknown keys at every level, naming them', () => {
    expect(refusal({ ...valid(), reviewer: ['1'] }).message).toContain('binding.reviewer: unknown key');
    const nested = valid() as Record<string, unknown>;
    nested.limits = { ...valid().limits, replyChunkSise: 10 };
    expect(refusal(nested).keys).toContain('binding.limits.replyChunkSise');
    const ch = valid() as Record<string, unknown>;
    ch.channels = [{ id: '200', mode: 'open', threads: true }];
    expect(refusal(ch).message).toContain('binding.channels[0].threads');
  });

  it('refuses empty allowlists', () => {
    expect(refusal({ ...valid(), channels: [] }).keys).toEqual(['binding.channels']);
    expect(refusal({ ...valid(), reviewers: [] }).keys).toEqual(['binding.reviewers']);
    expect(refusal({ ...valid(), reporters: [] }).message).toContain(
      'binding.reporters: reporters and reporterRoles are both empty',
    );
  });

  it('refuses a reply chunk over Discord limit and a bad mode, naming the key', () => {
    const b = valid();
    b.limits.replyChunkSize = 2001;
    expect(refusal(b).keys).toEqual(['binding.limits.replyChunkSize']);
    expect(refusal({ ...valid(), channels: [{ id: '200', mode: 'loud' }] }).keys).toEqual([
      'binding.channels[0].mode',
    ]);
  });

  it('refuses ids that are not snowflakes and channels listed twice', () => {
    expect(refusal({ ...valid(), guildId: 'my-server' }).keys).toEqual(['binding.guildId']);
    expect(
      refusal({
        ...valid(),
        channels: [
          { id: '1', mode: 'open' },
          { id: '1', mode: 'mention' },
        ],
      }).keys,
    ).toEqual(['binding.channels[1].id']);
  });
});
