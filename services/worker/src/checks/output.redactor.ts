/**
 * Check output goes to reviewers as evidence, so credentials are removed before it is stored:
 * exact values the worker knows (repository credentials) and common credential shapes.
 * The privacy library's detector set replaces `patternRedactor` when the module is wired with it.
 */
/** `keep`: the first capture group is context (a key name, a scheme) and stays readable. */
const PATTERNS: ReadonlyArray<{ pattern: RegExp; category: string; keep?: true; suffix?: string }> = [
  { pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, category: 'private_key' },
  { pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})\b/g, category: 'github_token' },
  { pattern: /\bsk-(?:ant-)?[A-Za-z0-9_-]{20,}/g, category: 'api_key' },
  { pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, category: 'aws_access_key_id' },
  { pattern: /\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}\b/g, category: 'discord_token' },
  { pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, category: 'jwt' },
  { pattern: /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:)[^\s/@]+@/gi, category: 'url_credentials', keep: true, suffix: '@' },
  { pattern: /(\bauthorization:\s*(?:bearer|basic|token)\s+)\S+/gi, category: 'authorization', keep: true },
  { pattern: /(\b[A-Za-z_]*(?:password|passwd|secret|token|api[_-]?key)[A-Za-z_]*\s*[=:]\s*)["']?[^\s"']{4,}["']?/gi, category: 'password', keep: true },
];

export function patternRedactor(text: string): string {
  let out = text;
  for (const { pattern, category, keep, suffix } of PATTERNS) {
    out = out.replace(pattern, (_match: string, prefix: unknown) =>
      `${keep && typeof prefix === 'string' ? prefix : ''}[redacted:${category}]${suffix ?? ''}`,
    );
  }
  return out;
}

/** Known secret values first (longest first, so a value containing another is removed whole), then patterns. */
export function createRedactor(knownSecrets: readonly string[], patterns: (text: string) => string = patternRedactor): (text: string) => string {
  const values = [...new Set(knownSecrets.map((s) => s.trim()).filter((s) => s.length >= 6))].sort((a, b) => b.length - a.length);
  return (text: string) => {
    let out = text;
    for (const v of values) out = out.split(v).join('[redacted:known_secret]');
    return patterns(out);
  };
}
