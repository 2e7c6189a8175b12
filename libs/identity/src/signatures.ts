/**
 * Technical signatures: the parts of a report that name a cause rather than a symptom.
 * Two reports sharing an exception, an error code or a stack frame are very likely the same
 * bug whatever words surround them; two reports whose versions, error codes or exceptions
 * differ are likely different bugs however alike the prose is. Extraction is regex-only
 * and bounded (inputs are capped), so it is safe on hostile text.
 */

export const SIGNATURE_KINDS = [
  'error_code',
  'http_status',
  'exception',
  'frame',
  'version',
  'area',
  'platform',
  'url',
  'path',
  'quoted',
] as const;
export type SignatureKind = (typeof SIGNATURE_KINDS)[number];
export type Signatures = Record<SignatureKind, ReadonlySet<string>>;

/** Area keywords: an operator configures their product's vocabulary; these are a generic start. */
export const DEFAULT_AREAS: Readonly<Record<string, readonly string[]>> = {
  checkout: [
    'checkout',
    'cart',
    'basket',
    'place order',
    'purchase',
    'coupon',
    'promo code',
    'discount code',
  ],
  login: [
    'login',
    'log in',
    'log-in',
    'sign in',
    'signin',
    'sign-in',
    'sso',
    'oauth',
    '2fa',
    'two factor',
    'mfa',
    'otp',
    'password reset',
    'magic link',
  ],
  signup: ['sign up', 'signup', 'register', 'registration', 'create account', 'onboarding'],
  billing: [
    'billing',
    'invoice',
    'subscription',
    'refund',
    'charged',
    'payment method',
    'credit card',
    'stripe',
  ],
  search: ['search', 'search bar', 'results', 'autocomplete', 'typeahead'],
  notifications: ['notification', 'notifications', 'push', 'email digest', 'unread badge'],
  upload: ['upload', 'uploading', 'attachment', 'attach a file', 'drag and drop', 'dropzone'],
  export: ['export', 'csv', 'download report', 'pdf export', 'xlsx'],
  editor: ['editor', 'markdown', 'wysiwyg', 'toolbar', 'undo', 'paste'],
  dashboard: ['dashboard', 'chart', 'charts', 'graph', 'widget'],
  settings: ['settings', 'preferences', 'profile page', 'account settings'],
  sync: ['sync', 'syncing', 'offline mode', 'conflict resolution'],
  calendar: ['calendar', 'timezone', 'time zone', 'recurring event', 'ical'],
  chat: ['chat', 'message list', 'dm', 'direct message', 'thread view', 'emoji'],
  api: ['api', 'rest endpoint', 'graphql', 'webhook', 'webhooks', 'rate limit'],
};

const PLATFORMS: Readonly<Record<string, RegExp>> = {
  ios: /\b(ios|iphone|ipad|ipados)\b/i,
  android: /\b(android|pixel|galaxy|samsung)\b/i,
  windows: /\b(windows|win10|win11|win 10|win 11)\b/i,
  macos: /\b(macos|mac os|osx|os x|macbook|mac)\b/i,
  linux: /\b(linux|ubuntu|debian|fedora|arch linux)\b/i,
  safari: /\bsafari\b/i,
  firefox: /\b(firefox|ff)\b/i,
  chrome: /\b(chrome|chromium)\b/i,
  edge: /\bedge\b/i,
};

const HTTP_REASONS: Readonly<Record<string, string>> = {
  'bad request': '400',
  unauthorized: '401',
  forbidden: '403',
  'not found': '404',
  'method not allowed': '405',
  conflict: '409',
  'payload too large': '413',
  'too many requests': '429',
  'internal server error': '500',
  'bad gateway': '502',
  'service unavailable': '503',
  'gateway timeout': '504',
};

const MAX_INPUT = 16_000;

export interface SignatureOptions {
  areas?: Readonly<Record<string, readonly string[]>>;
}

export function emptySignatures(): Signatures {
  return Object.fromEntries(SIGNATURE_KINDS.map((k) => [k, new Set<string>()])) as unknown as Signatures;
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function compileAreas(areas: Readonly<Record<string, readonly string[]>>): Array<[string, RegExp]> {
  return Object.entries(areas).map(([area, words]) => [
    area,
    new RegExp(`(?:^|[^a-z0-9])(?:${words.map((w) => escapeRe(w.toLowerCase())).join('|')})(?:[^a-z0-9]|$)`),
  ]);
}

const compiledCache = new WeakMap<object, Array<[string, RegExp]>>();
function areasFor(areas: Readonly<Record<string, readonly string[]>>): Array<[string, RegExp]> {
  let c = compiledCache.get(areas);
  if (!c) {
    c = compileAreas(areas);
    compiledCache.set(areas, c);
  }
  return c;
}

export function extractSignatures(input: string, options: SignatureOptions = {}): Signatures {
  const text = input.slice(0, MAX_INPUT);
  const lower = text.toLowerCase();
  const sig = {
    error_code: new Set<string>(),
    http_status: new Set<string>(),
    exception: new Set<string>(),
    frame: new Set<string>(),
    version: new Set<string>(),
    area: new Set<string>(),
    platform: new Set<string>(),
    url: new Set<string>(),
    path: new Set<string>(),
    quoted: new Set<string>(),
  };

  // Error codes: E1234, ERR_4002, TS2345, PG-08006; errno names: ECONNRESET, ENOENT, EACCES.
  for (const m of text.matchAll(/\b([A-Z]{1,5})[-_]?(\d{3,6})\b/g)) {
    const prefix = m[1] as string;
    if (prefix === 'HTTP' || prefix === 'V') continue;
    sig.error_code.add(`${prefix}${m[2]}`);
  }
  for (const m of text.matchAll(/\b(E[A-Z]{3,15})\b/g)) sig.error_code.add(m[1] as string);
  for (const m of text.matchAll(/\b((?:ERR|ERROR)_[A-Z0-9_]{3,40})\b/g)) sig.error_code.add(m[1] as string);
  for (const m of text.matchAll(/\berror code[:\s]+(-?\d{1,8}|0x[0-9a-f]+)\b/gi))
    sig.error_code.add(`code${(m[1] as string).toLowerCase()}`);

  // HTTP status: a 4xx/5xx next to an HTTP word, or a reason phrase.
  for (const m of lower.matchAll(
    /\b(?:http|status|status code|error|code|got|returns?|returned|returning|response|a|an)[\s:(]*([45]\d{2})\b/g,
  )) {
    sig.http_status.add(m[1] as string);
  }
  for (const m of lower.matchAll(
    /\b([45]\d{2})\s*(?:error|response|status|bad|internal|not found|forbidden|unauthorized|gateway|service|too many)/g,
  )) {
    sig.http_status.add(m[1] as string);
  }
  for (const m of lower.matchAll(/\(\s*([45]\d{2})\s*\)|->\s*([45]\d{2})\b/g))
    sig.http_status.add((m[1] ?? m[2]) as string);
  for (const [phrase, code] of Object.entries(HTTP_REASONS))
    if (lower.includes(phrase)) sig.http_status.add(code);

  // Exception and error type names, plus a few runtime fatal families.
  for (const m of text.matchAll(/\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Fault|Panic))\b/g)) {
    const name = m[1] as string;
    if (name !== 'Error' && name !== 'Exception') sig.exception.add(name);
  }
  if (/\bsegmentation fault\b|\bsigsegv\b|\bsegfault/i.test(text)) sig.exception.add('SIGSEGV');
  if (/\bout of memory\b|\boom\b|heap out of memory/i.test(text)) sig.exception.add('OutOfMemory');
  if (/\bpanic:/.test(text)) sig.exception.add('GoPanic');

  // Stack frames: function and file, never the line (lines move between versions of one bug).
  for (const m of text.matchAll(/\bat\s+(?:async\s+)?([\w$.<>[\]]+)\s+\(([^()\s]+?):\d+(?::\d+)?\)/g)) {
    sig.frame.add(`${lastSegment(m[1] as string)}@${basename(m[2] as string)}`);
  }
  for (const m of text.matchAll(/\bat\s+([\w$.<>]+)\(([\w$]+\.(?:java|kt|scala)):\d+\)/g)) {
    sig.frame.add(`${lastSegment(m[1] as string)}@${m[2]}`);
  }
  for (const m of text.matchAll(/File "([^"]+)", line \d+(?:, in ([\w<>]+))?/g)) {
    sig.frame.add(`${m[2] ?? '?'}@${basename(m[1] as string)}`);
  }

  // Versions: a v-prefix, a version word, or a three-part semver; normalised to major.minor.
  const addVersion = (major: string, minor: string | undefined): void => {
    sig.version.add(`${Number(major)}.${Number(minor ?? '0')}`);
  };
  for (const m of lower.matchAll(/(?<![/\w])v(\d{1,4})(?:\.(\d{1,4}))?(?:\.\d{1,6})?\b/g))
    if (!environmentVersion(lower, m.index)) addVersion(m[1] as string, m[2]);
  for (const m of lower.matchAll(
    /\b(?:version|ver|release|build|upgraded to|updated to|update to|upgrade to|after|since|on)\s+v?(\d{1,4})\.(\d{1,4})(?:\.\d{1,6})?\b/g,
  )) {
    addVersion(m[1] as string, m[2]);
  }
  for (const m of lower.matchAll(/(?<![\d.])(\d{1,4})\.(\d{1,4})\.(\d{1,6})(?:-[a-z0-9.]+)?(?![\d.]*\d)/g)) {
    if (!/\d+\.\d+\.\d+\.\d+/.test(m[0]) && !environmentVersion(lower, m.index))
      addVersion(m[1] as string, m[2]);
  }

  for (const [area, re] of areasFor(options.areas ?? DEFAULT_AREAS)) if (re.test(lower)) sig.area.add(area);
  for (const [name, re] of Object.entries(PLATFORMS)) if (re.test(text)) sig.platform.add(name);

  // URLs: host and path with numeric or opaque segments folded, so two users' ids do not differ.
  for (const m of text.matchAll(/https?:\/\/([^\s/"'<>)]+)(\/[^\s"'<>)?#]*)?/g)) {
    const host = (m[1] as string).toLowerCase().replace(/^www\./, '');
    if (/(^|\.)discord(app)?\.(com|gg)$|cdn\.discordapp|imgur|prnt\.sc|gyazo/.test(host)) continue;
    sig.url.add(`${host}${foldPath(m[2] ?? '/')}`);
  }
  for (const m of text.matchAll(
    /(?:^|[\s(`'"])((?:\/api)?\/[a-z0-9_-]+(?:\/[a-z0-9_:{}-]+)+)(?=[\s`'")?,.]|$)/gi,
  )) {
    sig.path.add(foldPath((m[1] as string).toLowerCase()));
  }
  for (const m of text.matchAll(
    /\b([\w-]+\.(?:js|ts|tsx|jsx|py|java|kt|go|rs|rb|php|cs|swift|vue|svelte))\b/g,
  )) {
    sig.path.add((m[1] as string).toLowerCase());
  }

  // Quoted error strings: the exact words a program printed are a strong, cheap fingerprint.
  for (const m of text.matchAll(/["“`]([^"”`\n]{12,160})["”`]/g)) {
    const q = normaliseQuote(m[1] as string);
    if (q.split(' ').length >= 3) sig.quoted.add(q);
  }
  for (const m of text.matchAll(/(?:^|\n)\s*(?:error|uncaught|fatal|exception)[:\s]+([^\n]{12,160})/gi)) {
    const q = normaliseQuote(m[1] as string);
    if (q.split(' ').length >= 3) sig.quoted.add(q);
  }
  return sig;
}

/**
 * Words whose version is the reporter's environment, not the product's: an operating system, a
 * browser, a language runtime. Two reports of one bug on Node 20 and Node 22 are still one bug.
 */
const ENVIRONMENT_BEFORE =
  /(?:^|[^a-z0-9])(?:node|nodejs|node\.js|deno|bun|python|python3|java|jdk|jre|openjdk|go|golang|rustc|ruby|php|perl|dotnet|\.net|kernel|linux|darwin|windows|win|macos|osx|ios|ipados|android|ubuntu|debian|fedora|mint|chrome|chromium|firefox|safari|edge|opera|brave|webview)[\s:/-]*(?:[a-z0-9_-]+\s+)?v?$/;

/**
 * A version written as a dependency pin (`name@1.2.3`, `name==1.2`) or right after an environment
 * word (`node v24.15.0`, `Darwin arm64 22.3.0`) names something the report runs on or pulls in,
 * not the product's release: it is neither shared evidence nor a conflict.
 */
function environmentVersion(lower: string, at: number): boolean {
  const before = lower.slice(Math.max(0, at - 40), at);
  if (/(?:@|==|~=|>=|<=)\s*$/.test(before)) return true;
  return ENVIRONMENT_BEFORE.test(before);
}

function lastSegment(fn: string): string {
  const parts = fn.split('.');
  return (parts.length > 1 ? parts.slice(-2).join('.') : fn).toLowerCase();
}

function basename(file: string): string {
  const clean = file.replace(/^.*[\\/]/, '').replace(/\?.*$/, '');
  return clean.toLowerCase();
}

function foldPath(p: string): string {
  return (
    p
      .split('/')
      .map((seg) => (/^\d+$|^[0-9a-f-]{16,}$|^[A-Za-z0-9_-]{20,}$/i.test(seg) ? ':id' : seg.toLowerCase()))
      .join('/')
      .replace(/\/$/, '') || '/'
  );
}

export function normaliseQuote(q: string): string {
  return q
    .toLowerCase()
    .replace(/\b0x[0-9a-f]+\b|\b\d+\b/g, '#')
    .replace(/[^a-z0-9#_ ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function signatureCount(s: Signatures): number {
  let n = 0;
  for (const k of SIGNATURE_KINDS) n += s[k].size;
  return n;
}
