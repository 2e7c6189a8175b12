/**
 * Text normalisation for the offline matcher: lower-case word tokens with stopwords removed,
 * a light suffix stemmer, and a small table of symptom synonyms. People describe one symptom
 * with different verbs ("crashes", "closes itself", "force quits"), so synonyms map onto one
 * canonical token before weighting; the table is configuration, not code.
 */

const STOPWORDS = new Set(
  `a about above after again against all am an and any are aren as at be because been before being below between both
   but by can cannot could did didn do does doesn doing don down during each few for from further had hadn has hasn have
   haven having he her here hers herself him himself his how i if in into is isn it its itself just let me more most my
   myself no nor not now of off on once only or other ought our ours ourselves out over own same shan she should so some
   such than that the their theirs them themselves then there these they this those through to too under until up very
   was wasn we were weren what when where which while who whom why will with won would wouldn you your yours yourself
   yourselves also still even really just get got getting gets im ive id its thats theres hi hey hello guys folks anyone
   someone please pls plz thanks thank thx ty help anybody know idea ideas any ok okay yeah yes lol tho though like seems
   seem seemed think thought today yesterday now again anyone else same here too happens happening happened issue problem
   bug bugs something thing things way one also since keep keeps kept time times every able unable try tried trying
   screenshot screenshots attached expected expect instead version`
    .split(/\s+/)
    .filter(Boolean),
);

/** Canonical token for a family of words people use for the same symptom or object. */
export const DEFAULT_SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  crash: [
    'crash',
    'crashes',
    'crashed',
    'crashing',
    'crahs',
    'crashs',
    'segfault',
    'abort',
    'aborts',
    'closes',
    'quits',
    'dies',
    'died',
  ],
  freeze: [
    'freeze',
    'freezes',
    'frozen',
    'froze',
    'hang',
    'hangs',
    'hung',
    'stuck',
    'unresponsive',
    'spinner',
    'spinning',
    'spins',
    'loading',
    'forever',
  ],
  blank: ['blank', 'white', 'empty'],
  login: ['login', 'logon', 'signin', 'sign', 'signing', 'authenticate', 'authentication', 'auth'],
  logout: ['logout', 'signout', 'logged'],
  slow: ['slow', 'slowly', 'sluggish', 'laggy', 'lag', 'lags', 'latency', 'ages'],
  fail: ['fail', 'fails', 'failed', 'failing', 'failure', 'broken', 'broke', 'breaks', 'busted', 'borked'],
  error: ['error', 'errors', 'err', 'exception', 'exceptions'],
  missing: ['missing', 'gone', 'disappeared', 'disappears', 'vanished', 'vanishes', 'lost'],
  duplicate: ['duplicate', 'duplicated', 'twice', 'double', 'doubled', 'dupe', 'dupes'],
  pay: [
    'pay',
    'payment',
    'payments',
    'paying',
    'charge',
    'charged',
    'charges',
    'billing',
    'billed',
    'invoice',
    'invoices',
  ],
  image: ['image', 'images', 'picture', 'pictures', 'photo', 'photos', 'img', 'avatar', 'avatars'],
  click: ['click', 'clicks', 'clicking', 'tap', 'taps', 'tapping', 'press', 'pressing'],
  button: ['button', 'btn', 'buttons'],
  upload: ['upload', 'uploads', 'uploading', 'uploaded', 'attaching', 'attachment', 'attachments'],
  download: ['download', 'downloads', 'downloading', 'export', 'exports', 'exporting', 'exported'],
  notification: ['notification', 'notifications', 'notif', 'notifs', 'push', 'alert', 'alerts'],
  timeout: ['timeout', 'timeouts', 'timed', 'timing'],
  mobile: ['mobile', 'phone', 'iphone', 'android', 'ios'],
  page: ['page', 'screen', 'view', 'tab'],
  password: ['password', 'passwd', 'pw', 'pwd'],
  dark: ['dark', 'night'],
  save: ['save', 'saves', 'saving', 'saved', 'persist', 'persisted'],
  search: ['search', 'searching', 'searches', 'find', 'lookup', 'filter', 'filters', 'filtering'],
  cart: ['cart', 'carts', 'basket', 'baskets', 'trolley'],
  total: ['total', 'totals', 'amount', 'amounts', 'subtotal'],
  quantity: ['quantity', 'quantities', 'qty'],
};

const SUFFIXES = [
  'ations',
  'ation',
  'ments',
  'ment',
  'ness',
  'ingly',
  'edly',
  'ing',
  'ies',
  'ied',
  'ers',
  'er',
  'ed',
  'es',
  'ly',
  's',
];

/** A conservative suffix stripper: enough to fold plurals and tenses, never below four letters. */
export function stem(word: string): string {
  if (word.length <= 4 || /\d/.test(word)) return word;
  for (const suf of SUFFIXES) {
    if (word.endsWith(suf) && word.length - suf.length >= 4) {
      const base = word.slice(0, -suf.length);
      if (suf === 'ies' || suf === 'ied') return `${base}y`;
      // "stopped" → "stop", "running" → "run"
      if ((suf === 'ing' || suf === 'ed') && base.length >= 4 && base.at(-1) === base.at(-2))
        return base.slice(0, -1);
      return base;
    }
  }
  return word;
}

export function synonymTable(table: Readonly<Record<string, readonly string[]>>): Map<string, string> {
  const m = new Map<string, string>();
  for (const [canon, words] of Object.entries(table)) for (const w of words) m.set(w, canon);
  return m;
}

const DEFAULT_SYNONYM_MAP = synonymTable(DEFAULT_SYNONYMS);

/** Lower-cased word tokens, stopwords out, synonyms folded, stemmed. Digits-only tokens are dropped (ids, counts). */
export function tokenize(text: string, synonyms: Map<string, string> = DEFAULT_SYNONYM_MAP): string[] {
  const out: string[] = [];
  const words = text
    .toLowerCase()
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/[’']/g, '')
    .split(/[^a-z0-9]+/);
  for (const w of words) {
    if (w.length < 2 || STOPWORDS.has(w) || /^\d+$/.test(w)) continue;
    const syn = synonyms.get(w);
    if (syn) {
      out.push(syn);
      continue;
    }
    const s = stem(w);
    out.push(synonyms.get(s) ?? s);
  }
  return out;
}

/** Character trigrams of the normalised word stream: tolerant of typos ("crahses", "chekout"). */
export function trigrams(tokens: readonly string[]): Map<string, number> {
  const grams = new Map<string, number>();
  for (const t of tokens) {
    const w = ` ${t} `;
    for (let i = 0; i + 3 <= w.length; i++) {
      const g = w.slice(i, i + 3);
      grams.set(g, (grams.get(g) ?? 0) + 1);
    }
  }
  return grams;
}

export function termFrequencies(tokens: readonly string[]): Map<string, number> {
  const tf = new Map<string, number>();
  for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
  return tf;
}

export function cosine(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const [k, v] of small) {
    const w = large.get(k);
    if (w !== undefined) dot += v * w;
  }
  for (const v of a.values()) na += v * v;
  for (const v of b.values()) nb += v * v;
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Sense ids of a text's content words (WordNet's most frequent meanings), for the sense bag: two
 * reports that share a sense share a meaning even when they share no word. Words of the product's
 * own vocabulary, stopwords and short or technical tokens are left out.
 */
export function senseTokens(text: string, lexicon: { senses(word: string): readonly string[] }): string[] {
  const out: string[] = [];
  for (const w of text
    .toLowerCase()
    .replace(/https?:\/\/\S+/g, ' ')
    .split(/[^a-z]+/)) {
    if (w.length < 3 || STOPWORDS.has(w)) continue;
    for (const s of lexicon.senses(w)) out.push(s);
  }
  return out;
}

/**
 * Exact release strings: three or four dotted numbers (1.34.0, 2024.9.0, 1.21.1011.0), with a
 * leading v dropped. Major.minor alone is a signature kind (`version`); a full release string
 * shared by two reports names one build.
 */
export function fullVersions(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text
    .slice(0, 16_000)
    .matchAll(/(?<![\w.])v?(\d{1,5}\.\d{1,5}\.\d{1,6}(?:\.\d{1,6})?)(?![\w.]*\d)/gi))
    out.add((m[1] as string).toLowerCase());
  return out;
}
