import { createRedactor, patternRedactor } from './output.redactor';

describe('check output redaction', () => {
  it.each([
    ['a GitHub token', 'pushing with ghp_abcdefghijklmnopqrstuvwxyz0123 now', 'ghp_abcdefghij'],
    ['URL credentials', 'fatal: https://bot:hunter22@git.example.com/x.git not found', 'hunter22'],
    ['a bearer header', 'Authorization: Bearer abc.def.ghi-secret', 'abc.def.ghi-secret'],
    ['an assignment', 'DB_PASSWORD=correct-horse-battery', 'correct-horse'],
    ['an API key', 'using sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA', 'sk-ant-api03'],
    ['an AWS key id', 'key AKIAABCDEFGHIJKLMNOP', 'AKIAABCDEFGHIJKLMNOP'],
  ])('removes %s', (_what, text, secret) => {
    const out = patternRedactor(text);
    expect(out).not.toContain(secret);
    expect(out).toContain('[redacted:');
  });

  it('keeps ordinary test output intact', () => {
    const text = 'PASS src/cart.spec.ts\n  ✓ adds an item (3 ms)\nTests: 1 passed, 1 total';
    expect(patternRedactor(text)).toBe(text);
  });

  it('removes known secret values wherever they appear', () => {
    const redact = createRedactor(['plain-value-from-a-file']);
    expect(redact('x plain-value-from-a-file y')).toBe('x [redacted:known_secret] y');
  });
});
