import { contentFingerprint, snowflakeAt, snowflakeMs } from './fingerprint';

describe('contentFingerprint', () => {
  const base = 'Recorded as case C01 — <@123456789012345678> thanks <:party:987654321098765432>';

  it.each([
    ['trailing whitespace and a final newline', `${base}  \n`],
    ['leading whitespace', `\n  ${base}`],
    ['CRLF line endings', 'a\r\nb'.replace('a', base)],
    ['a legacy nickname mention', base.replace('<@', '<@!')],
    ['a renamed custom emoji', base.replace(':party:', ':tada:')],
    ['a zero-width space', base.replace('thanks', 'than\u200bks')],
    ['decomposed Unicode', base.replace('—', '—').normalize('NFD')],
    ['a variation selector', `${base} ✔️`.replace('✔️', '✔\ufe0f')],
  ])('is the same after %s', (_, altered) => {
    const expected = _.includes('CRLF')
      ? contentFingerprint(`${base}\nb`)
      : _.includes('variation')
        ? contentFingerprint(`${base} ✔`)
        : contentFingerprint(base);
    expect(contentFingerprint(altered)).toBe(expected);
  });

  it('differs when the words differ', () => {
    expect(contentFingerprint(base)).not.toBe(contentFingerprint(base.replace('thanks', 'thank you')));
    expect(contentFingerprint(base)).not.toBe(
      contentFingerprint(base.replace('123456789012345678', '123456789012345679')),
    );
  });
});

describe('snowflake time', () => {
  it('the smallest id of a millisecond maps back to it', () => {
    const ms = Date.parse('2026-01-02T03:04:05.678Z');
    expect(snowflakeMs(snowflakeAt(ms))).toBe(ms);
    expect(BigInt(snowflakeAt(ms + 1))).toBeGreaterThan(BigInt(snowflakeAt(ms)));
    expect(snowflakeAt(0)).toBe('0');
  });
});
