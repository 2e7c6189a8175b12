import { createRedactor } from './output.redactor';

describe('check output redaction', () => {
  const redact = createRedactor(['plain-value-from-a-file', 'bot:plain-value-from-a-file']);

  it.each([
    ['a GitHub token', 'pushing with ghp_abcdefghijklmnopqrstuvwxyz0123456789 now', 'ghp_abcdefghij'],
    ['URL credentials', 'fatal: https://bot:hunter22xyz@git.example.com/x.git not found', 'hunter22xyz'],
    ['an AWS key id', 'key AKIAABCDEFGHIJKLMNOP used', 'AKIAABCDEFGHIJKLMNOP'],
    ['a known credential value', 'x plain-value-from-a-file y', 'plain-value-from-a-file'],
    ['a known credential line', 'echo bot:plain-value-from-a-file', 'bot:plain'],
  ])('removes %s', (_what, text, secret) => {
    const out = redact(text);
    expect(out).not.toContain(secret);
    expect(out).toContain('[redacted:');
  });

  it('keeps ordinary test output intact', () => {
    const text = 'PASS src/cart.spec.ts\n  ✓ adds an item (3 ms)\nTests: 1 passed, 1 total';
    expect(redact(text)).toBe(text);
  });
});
