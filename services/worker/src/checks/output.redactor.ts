import { redactText } from '@caseloop/privacy';

/**
 * Check output goes to reviewers as evidence, so it is redacted before it is stored: first the
 * exact credential values the worker knows (repository credentials files), longest first so a value
 * containing another goes whole; then every credential and personal-data shape the privacy library
 * detects.
 */
export function createRedactor(knownSecrets: readonly string[]): (text: string) => string {
  const values = [...new Set(knownSecrets.map((s) => s.trim()).filter((s) => s.length >= 6))].sort(
    (a, b) => b.length - a.length,
  );
  return (text: string) => {
    let out = text;
    for (const v of values) out = out.split(v).join('[redacted:known_secret]');
    return redactText(out).text;
  };
}
