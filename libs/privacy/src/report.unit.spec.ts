import { sanitizeReport } from './index';
import { HELD_OUT_NEGATIVES, HELD_OUT_POSITIVES, NEGATIVES, POSITIVES } from './testing/corpus';

describe('sanitizeReport', () => {
  it('removes the rest of a line after a private marker and keeps the label', () => {
    const report =
      'Checkout fails with a 500 after applying a coupon.\nCustomer: ACME GmbH, account 99123, order 5541\nExpected: order placed';
    const r = sanitizeReport(report);
    expect(r.brief).toBe(
      'Checkout fails with a 500 after applying a coupon.\nCustomer: [redacted:private_context]\nExpected: order placed',
    );
    expect(r.categories).toEqual(['private_context']);
    expect(r.redactions).toEqual([{ category: 'private_context', count: 1 }]);
  });

  it('treats a marker alone on its line as opening a private paragraph', () => {
    const report =
      'Steps: open /cart and pay.\n\n**Confidential:**\nthe client is Globex\ntheir admin login is admin/admin\n\nActual: HTTP 500';
    expect(sanitizeReport(report).brief).toBe(
      'Steps: open /cart and pay.\n\n**Confidential:**\n[redacted:private_context]\n\nActual: HTTP 500',
    );
  });

  it('recognises markers after list bullets and quotes, in any case', () => {
    const r = sanitizeReport(
      '- PRIVATE: internal ticket SUP-1234\n> confidential: contract value 2M\n1. private: VIP customer',
    );
    expect(r.brief).toBe(
      '- PRIVATE: [redacted:private_context]\n> confidential: [redacted:private_context]\n1. private: [redacted:private_context]',
    );
    expect(r.redactions).toEqual([{ category: 'private_context', count: 3 }]);
  });

  it('removes Discord spoilers and bracketed private spans inside a line', () => {
    const r = sanitizeReport(
      'Login as ||alice / hunter2|| on staging (private: tenant acme-eu) then click Pay.',
    );
    expect(r.brief).toBe(
      'Login as [redacted:private_context] on staging (private: [redacted:private_context]) then click Pay.',
    );
  });

  it('removes a fenced block marked private', () => {
    const report =
      'The export crashes:\n```private\ncustomer_id,email\n991,jane@acme.io\n```\nSee the stack trace above.';
    expect(sanitizeReport(report).brief).toBe(
      'The export crashes:\n[redacted:private_context]\nSee the stack trace above.',
    );
  });

  it('also redacts what the scanner finds outside marked text, including public IPv4', () => {
    const report =
      'Reported by jane.doe@acme-corp.com (+44 20 7946 0958). Fails from 81.2.69.160.\nMy token was ghp_R4nd0mL00kingT0k3nV4lu3F0rT3st1ng9Qz';
    const r = sanitizeReport(report);
    expect(r.brief).toBe(
      'Reported by [redacted:email] ([redacted:phone]). Fails from [redacted:ipv4].\nMy token was [redacted:github_token]',
    );
    expect(r.categories).toEqual(['email', 'github_token', 'ipv4', 'phone']);
  });

  it('does not treat a marker word without a colon as a marker', () => {
    const report = 'This is a private repository; the customer sees a blank page on confidential documents.';
    expect(sanitizeReport(report)).toEqual({ brief: report, categories: [], redactions: [] });
  });

  it('takes custom markers and can turn markers off', () => {
    const report = 'Internal: escalated by sales\nprivate: keep';
    expect(sanitizeReport(report, { privateMarkers: ['internal'] }).brief).toBe(
      'Internal: [redacted:private_context]\nprivate: keep',
    );
    expect(sanitizeReport(report, { privateMarkers: [] }).brief).toBe(report);
  });

  it('leaves no private text in the brief when private and scanned text overlap', () => {
    const r = sanitizeReport(
      'customer: bob@corp.io says the token sk-ant-api03-abcdefghij0123456789xyz is broken',
    );
    expect(r.brief).toBe('customer: [redacted:private_context]');
    expect(r.brief).not.toContain('bob');
  });

  it('turns a realistic Discord report into a brief that keeps what engineering needs', () => {
    const report = [
      '**Bug**: checkout total is wrong after removing an item',
      'Env: prod, Chrome 120.0.6099.109, build 2026.11.28, release v3.14.2',
      'Steps:',
      '1. add 2 items (SKU 100-200-3000)',
      '2. remove one',
      'Expected: total updates',
      'Actual: total shows the old value (see trace 550e8400-e29b-41d4-a716-446655440000)',
      'Customer: Globex Corp (account #88213), contact jane@globex.com, +1 415 555 0132',
      'Their admin logged in as ||admin / Winter2026!||',
      'private:',
      'they are threatening to churn',
      'renewal is on Dec 1',
      '',
      'Screenshot attached. Reported from 81.2.69.160.',
    ].join('\n');
    const r = sanitizeReport(report);
    expect(r.brief).toBe(
      [
        '**Bug**: checkout total is wrong after removing an item',
        'Env: prod, Chrome 120.0.6099.109, build 2026.11.28, release v3.14.2',
        'Steps:',
        '1. add 2 items (SKU 100-200-3000)',
        '2. remove one',
        'Expected: total updates',
        'Actual: total shows the old value (see trace 550e8400-e29b-41d4-a716-446655440000)',
        'Customer: [redacted:private_context]',
        'Their admin logged in as [redacted:private_context]',
        'private:',
        '[redacted:private_context]',
        '',
        'Screenshot attached. Reported from [redacted:ipv4].',
      ].join('\n'),
    );
    expect(r.categories).toEqual(['ipv4', 'private_context']);
    expect(r.redactions).toEqual([
      { category: 'ipv4', count: 1 },
      { category: 'private_context', count: 3 },
    ]);
  });

  describe('on text it redacted before', () => {
    const reports = [
      ...[...POSITIVES, ...NEGATIVES, ...HELD_OUT_POSITIVES, ...HELD_OUT_NEGATIVES].map((c) => c.text),
      'Customer: ACME, key AKIAIOSFODNN7EXAMPLE\n(private: account 991) and [confidential: 12]\n||spoiler||',
      'token: "ghp_R4nd0mL00kingT0k3nV4lu3F0rT3st1ng9Qz"\npassword="hunter2hunter2"\nmail bob@example.org',
      'private:\nline one\nline two\n\nExpected: the total',
      '```private\nsecret stuff\n```\nhttps://user:pa55word@db.example.com/x',
    ];

    it('returns the same brief, categories and counts (the privacy scope of a redacted copy is that of its raw text)', () => {
      const changed: string[] = [];
      for (const text of reports) {
        const first = sanitizeReport(text);
        const again = sanitizeReport(first.brief);
        if (JSON.stringify(again) !== JSON.stringify(first)) changed.push(text.slice(0, 60));
      }
      expect(changed).toEqual([]);
      // The corpus has reports with something to redact: the comparison is not between empty results.
      expect(reports.filter((t) => sanitizeReport(t).redactions.length > 0).length).toBeGreaterThan(50);
    });

    it('keeps and counts the markers in a redacted copy', () => {
      const r = sanitizeReport(
        'Key [redacted:aws_access_key_id] and [redacted:github_token]\nCustomer: [redacted:private_context]',
      );
      expect(r.brief).toBe(
        'Key [redacted:aws_access_key_id] and [redacted:github_token]\nCustomer: [redacted:private_context]',
      );
      expect(r.redactions).toEqual([
        { category: 'aws_access_key_id', count: 1 },
        { category: 'github_token', count: 1 },
        { category: 'private_context', count: 1 },
      ]);
      // A token assignment whose value is a marker is not re-redacted under another category.
      expect(sanitizeReport('token: "[redacted:github_token]"').categories).toEqual(['github_token']);
    });
  });
});
