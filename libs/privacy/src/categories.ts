/**
 * What the privacy review looks for. Credentials are redacted wherever they appear; personal data
 * (emails, phone numbers, optionally public IPv4 addresses) is redacted too, because evidence is shared
 * with reviewers who are not the reporter.
 */
export const CREDENTIAL_CATEGORIES = [
  'private_key',
  'jwt',
  'github_token',
  'slack_webhook',
  'slack_token',
  'discord_webhook',
  'discord_token',
  'aws_access_key_id',
  'aws_secret_access_key',
  'url_credentials',
  'authorization',
  'password',
  'api_key',
] as const;

export const PERSONAL_CATEGORIES = ['email', 'phone', 'ipv4'] as const;

export type CredentialCategory = (typeof CREDENTIAL_CATEGORIES)[number];
export type PersonalCategory = (typeof PERSONAL_CATEGORIES)[number];
export type PrivacyCategory = CredentialCategory | PersonalCategory;

/** Text a reporter marked private (see sanitizeReport); never produced by the scanner. */
export const PRIVATE_CONTEXT = 'private_context' as const;
export type ReportCategory = PrivacyCategory | typeof PRIVATE_CONTEXT;

export const isCredential = (c: PrivacyCategory): c is CredentialCategory =>
  (CREDENTIAL_CATEGORIES as readonly string[]).includes(c);

/** The marker that replaces a redacted span. Stable: receipts and tests refer to it. */
export const redactionMarker = (category: ReportCategory): string => `[redacted:${category}]`;

const ALL_CATEGORIES: readonly ReportCategory[] = [
  ...CREDENTIAL_CATEGORIES,
  ...PERSONAL_CATEGORIES,
  PRIVATE_CONTEXT,
];
const MARKER = new RegExp(String.raw`\[redacted:(${ALL_CATEGORIES.join('|')})\]`, 'g');

/** Where the redaction markers of known categories are in `text` (a redacted copy), in order. */
export function markerSpans(text: string): { category: ReportCategory; start: number; end: number }[] {
  return [...text.matchAll(MARKER)].map((m) => ({
    category: m[1] as ReportCategory,
    start: m.index,
    end: m.index + m[0].length,
  }));
}
