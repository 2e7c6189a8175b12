import { PrivacyCategory } from './categories';

/**
 * One detector per shape of secret or personal datum. Every pattern:
 * - is global with indices (`gd`), so the scanner can cut out just the secret part (named group
 *   `secret`, or `qsecret` for a quoted alternative) and keep the context (`api_key=[redacted:api_key]`);
 * - starts with a negative look-behind on its own character class, so a long run of similar
 *   characters (a base64 image in a log) is tried once, not at every offset — linear, not quadratic;
 * - has bounded quantifiers.
 * `accept` rejects near misses the pattern alone cannot tell apart (placeholders, code, versions, dates).
 */
export interface Detector {
  readonly category: PrivacyCategory;
  readonly pattern: RegExp;
  readonly accept?: (value: string, match: RegExpExecArray, text: string) => boolean;
}

/** Shannon entropy in bits per character. */
export function entropy(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

const PLACEHOLDER =
  /^(?:x{3,}|X{3,}|\*{3,}|\.{3,}|-+|_+|<[^>]*>|\$.*|%[^%]*%|\{\{.*|\{.*\}|\[redacted.*|redacted|masked|hidden|changeme|change_me|secret|password|passw0rd|token|api[_-]?key|your[_-].*|my[_-]?(?:secret|token|password|key).*|example.*|dummy.*|placeholder|sample|test|null|nil|none|undefined|true|false|string|str|number|int|boolean|bool|any|unknown|bytes|optional|required|env|default|empty)$/i;

const CODE_REFERENCE = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;

const isPlaceholder = (value: string): boolean => PLACEHOLDER.test(value) || /^(.)\1+$/.test(value);

/**
 * Words joined by `_`, `-` or `.` (`auth_token_storage_key_v2`), or run together in camel case
 * (`SignatureV4SignWithCredentials`): a name, not a random key. Random keys have short letter runs
 * and more digits.
 */
const READABLE_NAME = (value: string): boolean => {
  const parts = value.split(/[-_.]/);
  if (parts.length >= 2 && parts.every((p) => /^[A-Za-z]{0,12}\d{0,2}$/.test(p))) return true;
  const words = value.match(/[A-Z]?[a-z]{2,}|[A-Z]{2,}(?![a-z])/g) ?? [];
  const inWords = words.reduce((n, w) => n + w.length, 0);
  const digits = value.replace(/\D/g, '').length;
  return words.length >= 2 && inWords / value.length >= 0.8 && digits <= 2;
};

/** A token-like secret: long enough, letters and digits, not a placeholder, a code reference or a name. */
function tokenLike(value: string, minLength = 16): boolean {
  if (value.length < minLength) return false;
  if (!/[A-Za-z]/.test(value) || !/\d/.test(value)) return false;
  if (isPlaceholder(value) || CODE_REFERENCE.test(value) || READABLE_NAME(value)) return false;
  if (/^(?:https?:|file:|\/|~|\.\.?\/)/i.test(value)) return false;
  return entropy(value) >= 3;
}

function base64UrlDecode(value: string): string | null {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let bits = 0;
  let acc = 0;
  let out = '';
  for (const ch of value.replace(/=+$/, '')) {
    let v = alphabet.indexOf(ch);
    if (ch === '-' || ch === '+') v = 62;
    else if (ch === '_' || ch === '/') v = 63;
    if (v < 0) return null;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += String.fromCharCode((acc >> bits) & 0xff);
      acc &= (1 << bits) - 1;
    }
  }
  return out;
}

const char = (text: string, i: number): string => (i >= 0 && i < text.length ? (text[i] as string) : '');

/** Newline as written, or escaped inside a JSON string / env var (`\n`). */
const NL = String.raw`(?:\r?\n|\\r\\n|\\n)`;
const PEM_LABEL = String.raw`(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?`;

/**
 * Assignment of a secret-looking key: `KEY=v`, `key: v`, `"key": "v"`, `key => 'v'`, `--key=v`.
 * The key must END with one of the words, so `token_type`, `max_tokens` and `secret_name` are not keys.
 */
const assignment = (words: string, valueChars: string, quotedChars: string): RegExp =>
  new RegExp(
    String.raw`(?<![A-Za-z0-9])(?<key>[A-Za-z0-9_.-]{0,40}?(?:${words}))["']?[ \t]*(?<sep>=>|:=|=|:)[ \t]*` +
      String.raw`(?:(?<q>["'\x60])(?<qsecret>${quotedChars})\k<q>|(?<secret>${valueChars}))`,
    'gdi',
  );

/** `${DB_PASSWORD:-postgres}`, `%{TOKEN}`: a key inside a variable expansion is a reference, not an assignment. */
const insideExpansion = (m: RegExpExecArray, text: string): boolean =>
  /[$%]\{$/.test(text.slice(Math.max(0, m.index - 2), m.index));

/** Unquoted password that reads like code rather than configuration (`password = input;`, `password: pw,`). */
function passwordAccepted(value: string, m: RegExpExecArray, text: string): boolean {
  if (insideExpansion(m, text)) return false;
  const g = m.groups ?? {};
  const quoted = g.qsecret !== undefined;
  const key = g.key ?? '';
  if (isPlaceholder(value) || value.length < 3) return false;
  if (/(?:^|[_.-])(?:old)?pwd$/i.test(key) && /^[/~.]/.test(value)) return false; // the shell's PWD
  if (quoted) return true;
  if (CODE_REFERENCE.test(value)) return false;
  const end = (m.indices?.groups?.secret?.[1] ?? 0) as number;
  const next = char(text, end);
  if (next === '(' || next === '[' || next === '.') return false;
  const sep = g.sep ?? '';
  const spaced = /[ \t]/.test(
    text.slice(m.index, (m.indices?.groups?.secret?.[0] ?? 0) as number).replace(/["']/g, ''),
  );
  // `Password=secret;` in a connection string is data; `password: pw,` or `password = pw;` is code.
  if ((sep !== '=' || spaced) && (next === ';' || next === ',')) return false;
  return true;
}

const PHONE_DATE = /^(?:\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}[./-]\d{1,2}[./-]\d{1,2})$/;

/**
 * Phone numbers are validated on their digits and separators: 8–15 digits (E.164), one kind of
 * separator, and no neighbouring digit groups (hex dumps, tables of numbers, longer dotted versions).
 */
function phoneAccepted(
  value: string,
  m: RegExpExecArray,
  text: string,
  minDigits: number,
  maxDigits: number,
): boolean {
  const digits = value.replace(/\D/g, '');
  if (digits.length < minDigits || digits.length > maxDigits) return false;
  if (PHONE_DATE.test(value)) return false;
  const seps = new Set(
    value
      .replace(/^\+/, '')
      .replace(/[\d()]/g, '')
      .replace(/ +/g, ' '),
  );
  seps.delete(' ');
  if (seps.size > 1) return false;
  const start = m.index;
  const end = start + m[0].length;
  // a neighbouring digit group means this is part of a longer run of numbers
  const before = text.slice(Math.max(0, start - 2), start);
  const after = text.slice(end, end + 2);
  if (/\d[ .\-/:]?$/.test(before) || /^[ .\-/:]?\d/.test(after)) return false;
  if (/^[.,]\d/.test(after) || /[\d][.,]$/.test(before)) return false;
  // version-like context: `v1.2.3.4`, `version 415.555.0132`
  if (/(?:\bv|version\s?)$/i.test(text.slice(Math.max(0, start - 8), start))) return false;
  return true;
}

function ipv4Accepted(value: string, m: RegExpExecArray, text: string): boolean {
  const octets = value.split('.').map(Number);
  const [a = 0, b = 0] = octets;
  // loopback, "this host", private, link-local, CGNAT, multicast and reserved ranges are not personal
  if (a === 0 || a === 10 || a === 127 || a >= 224) return false;
  if (a === 169 && b === 254) return false;
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 100 && b >= 64 && b <= 127) return false;
  // documentation ranges (RFC 5737) are examples by definition
  if (value.startsWith('192.0.2.') || value.startsWith('198.51.100.') || value.startsWith('203.0.113.'))
    return false;
  if (/(?:\bv|version\s?|@)$/i.test(text.slice(Math.max(0, m.index - 8), m.index))) return false;
  return true;
}

const FILE_TLD =
  /^(?:png|jpe?g|gif|svg|webp|ico|js|mjs|cjs|ts|tsx|jsx|css|scss|map|json|lock|txt|ya?ml|html?)$/i;

function emailAccepted(value: string, m: RegExpExecArray, text: string): boolean {
  const at = value.indexOf('@');
  const domain = value.slice(at + 1);
  const labels = domain.split('.');
  if (FILE_TLD.test(labels[labels.length - 1] ?? '')) return false; // `icon@2x.png`
  if (/^\d+x$/i.test(labels[0] ?? '')) return false;
  const end = m.index + m[0].length;
  // `ssh://git@host/…`: the user part of a URL without a password names an account, not a mailbox
  if (text.slice(Math.max(0, m.index - 3), m.index) === '://') return false;
  // scp-style git remotes (`git@github.com:org/repo.git`) name a service account, not a person
  if (char(text, end) === ':' && /[\w~/]/.test(char(text, end + 1))) return false;
  return true;
}

const IPV4_OCTET = String.raw`(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`;

/** In priority order: when two findings overlap, the earlier detector wins. */
export const DETECTORS: readonly Detector[] = [
  {
    category: 'private_key',
    // An unterminated block (a truncated log) is redacted up to where its base64 body ends.
    pattern: new RegExp(
      String.raw`-----BEGIN ${PEM_LABEL}-----(?:(?:${NL}[ \t]*)+(?:[A-Za-z0-9+/=]{1,200}|[A-Za-z-]{1,40}: [^\r\n\\]{0,200}))*(?:(?:${NL}[ \t]*)?-----END ${PEM_LABEL}-----)?`,
      'gd',
    ),
  },
  {
    category: 'jwt',
    pattern: /(?<![\w-])eyJ[A-Za-z0-9_-]{8,2000}\.[A-Za-z0-9_-]{8,8000}\.[A-Za-z0-9_-]{0,2000}(?![\w-])/dg,
    accept: (v) => {
      const header = base64UrlDecode(v.slice(0, v.indexOf('.')));
      try {
        const parsed: unknown = JSON.parse(header ?? '');
        return (
          typeof parsed === 'object' &&
          parsed !== null &&
          ('alg' in parsed || 'typ' in parsed || 'enc' in parsed)
        );
      } catch {
        return false;
      }
    },
  },
  {
    category: 'github_token',
    pattern:
      /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,242})(?![A-Za-z0-9_])/dg,
  },
  {
    category: 'slack_webhook',
    pattern:
      /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/(?<secret>[A-Za-z0-9_/-]{8,300})/dg,
  },
  {
    category: 'slack_token',
    pattern: /(?<![\w-])(?:xox[abeoprs]|xapp)-[A-Za-z0-9-]{10,250}(?![\w-])/dg,
    accept: (v) => /\d/.test(v),
  },
  {
    category: 'discord_webhook',
    pattern:
      /https:\/\/(?:(?:canary|ptb)\.)?discord(?:app)?\.com\/api\/(?:v\d{1,2}\/)?webhooks\/\d{15,25}\/(?<secret>[A-Za-z0-9_-]{30,100})/dg,
  },
  {
    category: 'discord_token',
    // id (base64 of the snowflake) . timestamp . hmac; the first part must decode to the snowflake
    pattern:
      /(?<![\w.-])(?:[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}|mfa\.[A-Za-z0-9_-]{84})(?![\w-])/dg,
    accept: (v) =>
      v.startsWith('mfa.') || /^\d{15,21}$/.test(base64UrlDecode(v.slice(0, v.indexOf('.'))) ?? ''),
  },
  {
    category: 'aws_access_key_id',
    pattern:
      /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}(?![A-Za-z0-9])/dg,
  },
  {
    category: 'aws_secret_access_key',
    pattern:
      /(?<![A-Za-z0-9])(?:aws_?)?secret_?access_?key["']?[ \t]*(?:=>|=|:)[ \t]*["']?(?<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi,
  },
  {
    category: 'url_credentials',
    // userinfo `user:pass@` (user may be empty) or a long token-only userinfo; the host stays
    pattern:
      /(?<![\w+.-])[a-z][a-z0-9+.-]{1,20}:\/\/(?<secret>[^\s:@/?#'"<>]{0,200}:[^\s@/?#'"<>]{1,200}|[^\s:@/?#'"<>]{20,200})@(?=[\w[])/dgi,
    accept: (v) => {
      const colon = v.indexOf(':');
      if (colon < 0) return tokenLike(v, 20);
      const pass = v.slice(colon + 1);
      return pass.length > 0 && !/^\d{1,5}$/.test(pass);
    },
  },
  {
    category: 'authorization',
    pattern:
      /(?<![\w-])(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:Bearer|Basic|Token|Bot|Digest)[ \t]+(?<secret>[A-Za-z0-9._~+/=-]{8,4000})/dgi,
    accept: (v) => !isPlaceholder(v) && !CODE_REFERENCE.test(v),
  },
  {
    category: 'password',
    pattern: assignment(
      'password|passwd|passphrase|pwd',
      String.raw`[^\s"'\x60,;(){}\[\]<>]{1,200}`,
      String.raw`[^"'\x60\r\n]{1,200}`,
    ),
    accept: passwordAccepted,
  },
  {
    category: 'api_key',
    // vendor keys with a recognisable prefix need no context
    pattern:
      /(?<![\w-])(?:npm_[A-Za-z0-9]{36}|sk-ant-[A-Za-z0-9_-]{20,200}|sk-(?:proj-)?[A-Za-z0-9_-]{32,200}|(?:sk|rk)_live_[A-Za-z0-9]{24,200}|AIza[0-9A-Za-z_-]{35}|glpat-[0-9A-Za-z_-]{20,60})(?![\w-])/dg,
    accept: (v) => /\d/.test(v),
  },
  {
    category: 'api_key',
    pattern: assignment(
      String.raw`api[_-]?key|apikey|(?:secret|private|signing|encryption|master|access|app)[_-]?key|secret|token|credentials?|auth`,
      String.raw`[A-Za-z0-9_\-./+=~!@#%^*:]{16,400}`,
      String.raw`[^\s"'\x60]{16,400}`,
    ),
    accept: (v, m, text) => !insideExpansion(m, text) && tokenLike(v),
  },
  {
    category: 'email',
    pattern:
      /(?<![A-Za-z0-9._%+_-])[A-Za-z0-9][A-Za-z0-9._%+_-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/dg,
    accept: emailAccepted,
  },
  {
    category: 'phone',
    // international: +<country code> and groups
    pattern: /(?<![\w+])\+[1-9]\d{0,3}(?:[ .-]?\(\d{1,4}\)|[ .-]?\d{1,6}){1,6}(?![\w])/dg,
    accept: (v, m, text) => {
      if (!/[ .()-]/.test(v) && (m.index === 0 || char(text, m.index - 1) === '\n')) return false; // a diff line
      return phoneAccepted(v, m, text, 8, 15);
    },
  },
  {
    category: 'phone',
    // North American: (415) 555-0132, 415-555-0132, 415.555.0132, 1-415-555-0132
    pattern: /(?<![\w.+-])(?:1[ .-])?(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[ .-])[2-9]\d{2}[ .-]\d{4}(?![\w])/dg,
    accept: (v, m, text) => phoneAccepted(v, m, text, 10, 11),
  },
  {
    category: 'phone',
    // national with a trunk 0: 020 7946 0958, 07700 900123, 030 901820, (030) 12345678, 06 12 34 56 78
    pattern: /(?<![\w.+-])(?:\(0\d{1,4}\)|0\d{1,4})(?:[ ./-]\d{2,8}){1,4}(?![\w])/dg,
    accept: (v, m, text) => phoneAccepted(v, m, text, 9, 12),
  },
  {
    category: 'ipv4',
    pattern: new RegExp(String.raw`(?<![\w.])(?:${IPV4_OCTET}\.){3}${IPV4_OCTET}(?![\w]|\.\d)`, 'gd'),
    accept: ipv4Accepted,
  },
];
