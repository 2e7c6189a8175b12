import { IdentityConfig, identityConfig } from './identity.config';
import { extractSignatures, SignatureKind, Signatures, emptySignatures, SIGNATURE_KINDS } from './signatures';
import { Lexicon, wordnet } from './lexicon';
import { fullVersions, senseTokens, synonymTable, termFrequencies, tokenize, trigrams } from './text';

export type IdentityOutcome = 'link' | 'review' | 'new';

export interface IdentityDecision {
  decision: IdentityOutcome;
  /** The best candidate case, or null when the index is empty or nothing shares a term. */
  matchedWith: string | null;
  confidence: number;
  /** Which signals matched or conflicted, in words an operator can read in the ledger. */
  reasons: string[];
  /** Runners-up, best first, for link reviews and tuning. */
  alternatives: Array<{ caseId: string; confidence: number }>;
}

export interface IdentityQuery {
  text: string;
  /** When the report was written (ms since epoch): duplicates of one bug arrive close together. */
  at?: number | null;
  /** Optional embedding of the text (from the embeddings adapter). */
  embedding?: readonly number[] | null;
  /** Cases never to match (e.g. the case a held report was already refused for). */
  exclude?: ReadonlySet<string>;
}

/** A bag of weighted features with its norm, computed when the bag last changed. */
interface Bag {
  counts: Map<string, number>;
  norm: number;
}

interface CaseDoc {
  slot: number;
  caseId: string;
  sources: Set<string>;
  words: Bag;
  grams: Bag;
  senses: Bag;
  sig: Signatures;
  /** Exact release strings (1.34.0, 2024.9.0): two reports naming one build are strong evidence. */
  releases: Set<string>;
  /** The newest source's time, when known. */
  lastAt: number | null;
  /** The first sources' texts (as indexed, i.e. sanitized), for a judge to read. */
  texts: string[];
  embedding: number[] | null;
  /** Each source on its own: a report is compared with every report of a case, not only their sum. */
  parts: Array<{ words: Bag; grams: Bag; senses: Bag }>;
  // Norms are cached and refreshed whenever the index grew or shrank by more than a few percent.
}

const STRONG: readonly SignatureKind[] = [
  'exception',
  'error_code',
  'frame',
  'quoted',
  'http_status',
  'url',
  'path',
];
/** Kinds where two disjoint non-empty sets suggest a different cause. */
/** Kinds that bring a case into the ranked head by themselves (an area alone is too common: it links unrelated reports). */
const RETRIEVE: readonly SignatureKind[] = STRONG;
/** Conflicts that stop an automatic link (a reviewer decides): the ones that name a different cause. */
const GUARDED: readonly SignatureKind[] = ['version', 'error_code', 'exception', 'http_status'];
const CONFLICTING: readonly SignatureKind[] = [
  'version',
  'error_code',
  'exception',
  'http_status',
  'frame',
  'area',
  'platform',
];

/** 0 at or below `floor`, 1 at or above `full`, linear between. */
const ramp = (x: number, floor: number, full: number): number =>
  full <= floor ? (x >= full ? 1 : 0) : Math.min(1, Math.max(0, (x - floor) / (full - floor)));
const round = (x: number): number => Math.round(x * 1000) / 1000;
const idfOf = (df: number, n: number): number => Math.log(1 + (n + 1) / (df + 1));
const tfw = (f: number): number => 1 + Math.log(f);

/**
 * An in-memory read model over the open cases: an inverted index of words and signatures.
 * The decision for a report is a pure function of the index contents and the report, so a
 * replay over the same sequence of reports decides the same way. The index is rebuilt from
 * the ledger at start and kept current as events arrive; it is never a source of truth.
 *
 * Scoring: TF-IDF cosine over stemmed words and over character trigrams (typo tolerance),
 * the best of the whole case and each of its sources, then signature agreement amplifies the
 * text score and signature conflicts subtract from it. Document norms are computed when a
 * document changes (with the idf of that moment), so a query touches only its own terms.
 */
export class IdentityIndex {
  readonly config: IdentityConfig;
  private readonly synonyms: Map<string, string>;
  private readonly docs = new Map<string, CaseDoc>();
  private readonly bySlot: Array<CaseDoc | undefined> = [];
  private readonly freeSlots: number[] = [];
  /** term → slot → tf weight of the case's aggregate bag. */
  private readonly postings = new Map<string, Map<number, number>>();
  private readonly sigPostings = new Map<string, Set<number>>();
  private readonly gramDf = new Map<string, number>();
  private readonly senseDf = new Map<string, number>();
  /** How many open cases name each release string and each version signature. */
  private readonly releaseDf = new Map<string, number>();
  private readonly versionDf = new Map<string, number>();
  /** How many open cases name each area and each platform: one most cases share tells little. */
  private readonly areaDf = new Map<string, number>();
  private readonly platformDf = new Map<string, number>();
  private readonly lexicon: Lexicon | null;
  private acc = new Float64Array(1024);
  /** The number of open cases when every norm was last recomputed. */
  private normN = 0;

  constructor(config: IdentityConfig = identityConfig()) {
    this.config = config;
    this.synonyms = synonymTable(config.synonyms);
    this.lexicon = config.model.sense !== 0 ? wordnet() : null;
  }

  get size(): number {
    return this.docs.size;
  }

  has(caseId: string): boolean {
    return this.docs.has(caseId);
  }

  /** What a judge reads about an open case: its first sources, as they were indexed. */
  brief(caseId: string): string {
    return (this.docs.get(caseId)?.texts ?? []).join('\n---\n');
  }

  caseIds(): string[] {
    return [...this.docs.keys()];
  }

  /** Adds a source's text to a case (opening the case in the index if needed). Idempotent per source. */
  add(
    caseId: string,
    sourceId: string,
    text: string,
    embedding: readonly number[] | null = null,
    at: number | null = null,
  ): void {
    let doc = this.docs.get(caseId);
    if (!doc) {
      const slot = this.freeSlots.pop() ?? this.bySlot.length;
      doc = {
        slot,
        caseId,
        sources: new Set(),
        words: { counts: new Map(), norm: 0 },
        grams: { counts: new Map(), norm: 0 },
        senses: { counts: new Map(), norm: 0 },
        sig: emptySignatures(),
        releases: new Set(),
        lastAt: null,
        texts: [],
        embedding: null,
        parts: [],
      };
      this.docs.set(caseId, doc);
      this.bySlot[slot] = doc;
      if (slot >= this.acc.length) this.acc = new Float64Array(Math.max(slot + 1, this.acc.length * 2));
    }
    if (doc.sources.has(sourceId)) return;
    doc.sources.add(sourceId);
    const tokens = tokenize(text, this.synonyms);
    const tf = termFrequencies(tokens);
    const grams = trigrams(tokens);
    for (const [t, c] of tf) doc.words.counts.set(t, (doc.words.counts.get(t) ?? 0) + c);
    for (const [t, c] of doc.words.counts) this.posting(t).set(doc.slot, tfw(c));
    for (const [g, c] of grams) {
      if (!doc.grams.counts.has(g)) this.gramDf.set(g, (this.gramDf.get(g) ?? 0) + 1);
      doc.grams.counts.set(g, (doc.grams.counts.get(g) ?? 0) + c);
    }
    const senses = this.lexicon
      ? termFrequencies(senseTokens(text, this.lexicon))
      : new Map<string, number>();
    for (const [g, c] of senses) {
      if (!doc.senses.counts.has(g)) this.senseDf.set(g, (this.senseDf.get(g) ?? 0) + 1);
      doc.senses.counts.set(g, (doc.senses.counts.get(g) ?? 0) + c);
    }
    for (const r of fullVersions(text)) {
      if (!doc.releases.has(r)) this.releaseDf.set(r, (this.releaseDf.get(r) ?? 0) + 1);
      doc.releases.add(r);
    }
    if (doc.texts.length < 3) doc.texts.push(text.slice(0, 2000));
    if (at !== null && Number.isFinite(at)) doc.lastAt = Math.max(doc.lastAt ?? at, at);
    const sig = extractSignatures(text, { areas: this.config.areas });
    for (const k of SIGNATURE_KINDS) {
      for (const v of sig[k]) {
        if (!doc.sig[k].has(v)) {
          (doc.sig[k] as Set<string>).add(v);
          const df = this.dfOf(k);
          if (df) df.set(v, (df.get(v) ?? 0) + 1);
          if (RETRIEVE.includes(k)) this.sigPosting(`${k}:${v}`).add(doc.slot);
        }
      }
    }
    if (embedding && !doc.embedding) doc.embedding = [...embedding];
    doc.parts.push({
      words: { counts: tf, norm: 0 },
      grams: { counts: grams, norm: 0 },
      senses: { counts: senses, norm: 0 },
    });
    this.renorm(doc);
    this.refreshIfDrifted();
  }

  /** A case that is no longer open (terminal, or folded into another) leaves the index. */
  remove(caseId: string): void {
    const doc = this.docs.get(caseId);
    if (!doc) return;
    for (const t of doc.words.counts.keys()) {
      const p = this.postings.get(t);
      p?.delete(doc.slot);
      if (p && p.size === 0) this.postings.delete(t);
    }
    for (const [df, bag] of [
      [this.gramDf, doc.grams],
      [this.senseDf, doc.senses],
    ] as const) {
      for (const g of bag.counts.keys()) {
        const n = (df.get(g) ?? 1) - 1;
        if (n <= 0) df.delete(g);
        else df.set(g, n);
      }
    }
    for (const [df, values] of [
      [this.releaseDf, doc.releases],
      [this.versionDf, doc.sig.version],
      [this.areaDf, doc.sig.area],
      [this.platformDf, doc.sig.platform],
    ] as const) {
      for (const v of values) {
        const n = (df.get(v) ?? 1) - 1;
        if (n <= 0) df.delete(v);
        else df.set(v, n);
      }
    }
    for (const k of RETRIEVE) {
      for (const v of doc.sig[k]) {
        const p = this.sigPostings.get(`${k}:${v}`);
        p?.delete(doc.slot);
        if (p && p.size === 0) this.sigPostings.delete(`${k}:${v}`);
      }
    }
    this.docs.delete(caseId);
    this.bySlot[doc.slot] = undefined;
    this.freeSlots.push(doc.slot);
    this.refreshIfDrifted();
  }

  /**
   * Idf moves as cases come and go. Recomputing every norm on each change would cost O(index) per
   * report, so norms are refreshed together when the open-case count drifted by more than 5% (always
   * below 40 cases). Decisions then depend only on the sequence of adds and removes, not on queries.
   */
  private refreshIfDrifted(): void {
    const n = this.docs.size;
    if (n >= 40 && Math.abs(n - this.normN) <= 0.05 * n) return;
    for (const d of this.docs.values()) this.renorm(d);
    this.normN = n;
  }

  private renorm(doc: CaseDoc): void {
    const n = this.docs.size;
    doc.words.norm = this.wordNorm(doc.words.counts, n);
    doc.grams.norm = this.dfNorm(this.gramDf, doc.grams.counts, n);
    doc.senses.norm = this.dfNorm(this.senseDf, doc.senses.counts, n);
    if (doc.parts.length > 1) {
      for (const part of doc.parts) {
        part.words.norm = this.wordNorm(part.words.counts, n);
        part.grams.norm = this.dfNorm(this.gramDf, part.grams.counts, n);
        part.senses.norm = this.dfNorm(this.senseDf, part.senses.counts, n);
      }
    }
  }

  private query(query: IdentityQuery): Query {
    const cfg = this.config;
    const n = this.docs.size;
    const tokens = tokenize(query.text, this.synonyms);
    const qsig = extractSignatures(query.text, { areas: cfg.areas });
    const q: Query = {
      words: new Map(),
      wordNorm: 0,
      grams: new Map(),
      gramNorm: 0,
      senses: new Map(),
      senseNorm: 0,
      sig: qsig,
      releases: fullVersions(query.text),
      at: query.at ?? null,
      usualRecency: this.usualRecency(query.at ?? null),
      embedding: query.embedding ?? null,
    };
    for (const [t, f] of termFrequencies(tokens)) {
      const idf = idfOf(this.postings.get(t)?.size ?? 0, n);
      const w = tfw(f) * idf;
      q.words.set(t, { w, idf });
      q.wordNorm += w * w;
    }
    q.wordNorm = Math.sqrt(q.wordNorm);
    for (const [g, f] of trigrams(tokens)) {
      const idf = idfOf(this.gramDf.get(g) ?? 0, n);
      const w = tfw(f) * idf;
      q.grams.set(g, { w, idf });
      q.gramNorm += w * w;
    }
    q.gramNorm = Math.sqrt(q.gramNorm);
    if (this.lexicon) {
      for (const [g, f] of termFrequencies(senseTokens(query.text, this.lexicon))) {
        const idf = idfOf(this.senseDf.get(g) ?? 0, n);
        const w = tfw(f) * idf;
        q.senses.set(g, { w, idf });
        q.senseNorm += w * w;
      }
      q.senseNorm = Math.sqrt(q.senseNorm);
    }

    return q;
  }

  /** Every candidate of the ranking's head, scored, best first. */
  private rank(query: IdentityQuery, q: Query): Scored[] {
    const cfg = this.config;
    const n = this.docs.size;
    const qsig = q.sig;
    // Rank by dot product over the postings of the report's terms; score only the head exactly.
    // Terms in more than a tenth of a large index carry little rank information but most of the
    // work: they are left out of candidate generation (never out of scoring) when rarer ones exist.
    const acc = this.acc;
    const touched: number[] = [];
    const common = Math.max(200, Math.floor(n * cfg.rankingDfCap));
    const rare = [...q.words].filter(([t]) => (this.postings.get(t)?.size ?? 0) <= common);
    for (const [t, { w, idf }] of rare.length >= 3 ? rare : q.words) {
      const post = this.postings.get(t);
      if (!post) continue;
      const qw = w * idf;
      for (const [slot, dw] of post) {
        if (acc[slot] === 0) touched.push(slot);
        acc[slot] = (acc[slot] as number) + qw * dw;
      }
    }
    const head = new TopK(cfg.maxCandidates);
    for (const slot of touched) {
      const doc = this.bySlot[slot] as CaseDoc;
      head.offer(slot, doc.words.norm > 0 ? (acc[slot] as number) / doc.words.norm : 0);
      acc[slot] = 0;
    }
    const heads = new Set<number>(head.slots());
    for (const k of RETRIEVE) {
      for (const v of qsig[k]) {
        const post = this.sigPostings.get(`${k}:${v}`);
        if (!post || post.size > cfg.maxCandidates) continue;
        for (const slot of post) heads.add(slot);
      }
    }
    // Embeddings find paraphrases that share no word; a linear scan is fine at open-case scale
    // and only runs when an embeddings adapter is configured.
    if (q.embedding) {
      const byEmb = new TopK(cfg.maxCandidates);
      for (const doc of this.docs.values()) {
        if (doc.embedding && doc.embedding.length === q.embedding.length)
          byEmb.offer(doc.slot, denseCosine(q.embedding, doc.embedding));
      }
      for (const slot of byEmb.slots()) heads.add(slot);
    }

    const found: Array<{ doc: CaseDoc; f: ReturnType<IdentityIndex['features']>; text: number }> = [];
    for (const slot of heads) {
      const doc = this.bySlot[slot] as CaseDoc;
      if (query.exclude?.has(doc.caseId)) continue;
      const f = this.features(q, doc);
      found.push({ doc, f, text: cfg.wordWeight * f.x.word + (1 - cfg.wordWeight) * f.x.gram });
    }
    // How far a candidate's text score stands above the best other candidate's: a duplicate tends to
    // have one clear match, a report of another cause in a busy area several alike. Not a feature of
    // the model (it did not rank better in cross-validation), but one of the link gate's signals.
    let first = 0;
    let second = 0;
    for (const c of found) {
      if (c.text > first) [first, second] = [c.text, first];
      else if (c.text > second) second = c.text;
    }
    const scored: Scored[] = [];
    for (const { doc, f, text } of found) {
      const margin = Math.max(0, text - (text >= first ? second : first));
      let confidence = confidenceOf(cfg.model, f.x);
      // Conflicting signatures name another cause: such a candidate is at most a review, in the
      // middle of the review band, however alike the prose is.
      if (f.conflicts.length > 0)
        confidence = Math.min(confidence, (cfg.reviewThreshold + cfg.linkThreshold) / 2);
      // Recency may hold a link back (an old case), never make one: on a busy channel every open case
      // is recent, so a link must stand on text and signatures with the time counted as unknown.
      const timeless = confidenceOf(cfg.model, { ...f.x, recency: 0 });
      scored.push({
        doc,
        confidence,
        linkConfidence: Math.min(confidence, timeless),
        reasons: f.reasons,
        conflicts: f.conflicts,
        x: f.x,
        margin,
      });
    }
    scored.sort((a, b) => b.confidence - a.confidence || (a.doc.caseId < b.doc.caseId ? -1 : 1));
    return scored;
  }

  decide(query: IdentityQuery): IdentityDecision {
    const cfg = this.config;
    const scored = this.rank(query, this.query(query));
    const best = scored[0];
    const alternatives = scored
      .slice(1, 4)
      .map((x) => ({ caseId: x.doc.caseId, confidence: round(x.confidence) }));
    if (!best) {
      return {
        decision: 'new',
        matchedWith: null,
        confidence: 0,
        reasons: ['no open case shares a term or signature'],
        alternatives,
      };
    }
    let decision: IdentityOutcome =
      best.linkConfidence >= cfg.linkThreshold
        ? 'link'
        : best.confidence >= cfg.reviewThreshold
          ? 'review'
          : 'new';
    // Two independent signals for an automatic link: the score, and either something shared besides
    // prose or prose that singles this case out among the candidates.
    if (decision === 'link' && !corroborated(best.x, best.margin, cfg.linkGate.margin)) {
      decision = 'review';
      best.reasons.push(
        `held for review: no shared signature, status or release, and the text stands only ${round(best.margin)} above the next candidate's`,
      );
    }
    // A deterministic guard: conflicting technical signatures (another version, error code,
    // exception or status) are never joined without a person, whatever the prose says.
    if (decision === 'link' && best.conflicts.length > 0) {
      decision = 'review';
      best.reasons.push(`held for review: conflicting ${best.conflicts.join(', ')}`);
    }
    return {
      decision,
      matchedWith: best.doc.caseId,
      confidence: round(best.confidence),
      reasons: best.reasons.slice(0, 20),
      alternatives,
    };
  }

  /** The signals of one candidate, each in [0, 1], with the reasons an operator reads. */
  private features(q: Query, doc: CaseDoc): { x: Features; reasons: string[]; conflicts: string[] } {
    const cfg = this.config;
    const mix = (w: number, g: number): number => cfg.wordWeight * w + (1 - cfg.wordWeight) * g;
    let word = bagCosine(q.words, q.wordNorm, doc.words, doc.words.norm);
    let gram = bagCosine(q.grams, q.gramNorm, doc.grams, doc.grams.norm);
    let sense = bagCosine(q.senses, q.senseNorm, doc.senses, doc.senses.norm);
    if (doc.parts.length > 1) {
      for (const part of doc.parts) {
        const w = bagCosine(q.words, q.wordNorm, part.words, part.words.norm);
        const g = bagCosine(q.grams, q.gramNorm, part.grams, part.grams.norm);
        if (mix(w, g) > mix(word, gram)) {
          word = w;
          gram = g;
        }
        sense = Math.max(sense, bagCosine(q.senses, q.senseNorm, part.senses, part.senses.norm));
      }
    }
    const reasons = [
      `text similarity ${round(mix(word, gram))} (words ${round(word)}, trigrams ${round(gram)}, senses ${round(sense)})`,
    ];
    let embedding = 0;
    if (q.embedding && doc.embedding && q.embedding.length === doc.embedding.length) {
      embedding = Math.max(0, denseCosine(q.embedding, doc.embedding));
      reasons.push(`embedding similarity ${round(embedding)}`);
    }
    const x: Features = { ...ZERO_FEATURES, word, gram, sense, embedding };
    const conflicts: string[] = [];
    for (const k of SIGNATURE_KINDS) {
      const a = q.sig[k];
      const b = doc.sig[k];
      if (a.size === 0 || b.size === 0) continue;
      const shared = k === 'quoted' ? sharedQuotes(a, b) : [...a].filter((v) => b.has(v));
      if (shared.length > 0) {
        if (STRONG.includes(k)) x.strong = Math.min(1, x.strong + 0.5);
        if (k === 'version') x.versionShared = 1;
        if (k === 'area') x.areaShared = 1;
        if (k === 'platform') x.platformShared = 1;
        if (k === 'http_status') x.statusShared = 1;
        reasons.push(`shared ${k.replace('_', ' ')}: ${shown(k, shared)}`.slice(0, 300));
      } else if (CONFLICTING.includes(k)) {
        if (k === 'version') x.versionConflict = 1;
        else if (k === 'area') x.areaConflict = 1;
        else if (k === 'platform') x.platformConflict = 1;
        else if (k !== 'frame') x.codeConflict = 1;
        if (GUARDED.includes(k)) conflicts.push(k.replace('_', ' '));
        reasons.push(
          `conflicting ${k.replace('_', ' ')}: ${shown(k, [...a])} vs ${shown(k, [...b])}`.slice(0, 300),
        );
      }
    }
    const release = [...q.releases].filter((r) => doc.releases.has(r));
    if (release.length > 0) {
      x.release = 1;
      reasons.push(`same release: ${release.slice(0, 3).join(', ')}`);
    }
    // Metadata agreement (a release, a version, an area, a platform) is evidence only beside prose
    // that tells of the same thing or a shared technical signature: on a product channel most reports
    // name the current release and the same few areas. A release or version most open cases share
    // is not distinctive either, so it weighs by how few of them name it.
    const text = mix(word, gram);
    const corroboration = x.strong > 0 ? 1 : ramp(text, cfg.corroboration.floor, cfg.corroboration.full);
    const n = this.docs.size + 1;
    const distinct = (df: Map<string, number>, values: readonly string[]): number =>
      Math.max(0, ...values.map((v) => 1 - (df.get(v) ?? 0) / n));
    if (x.release > 0) x.release = corroboration * distinct(this.releaseDf, release);
    if (x.versionShared > 0)
      x.versionShared =
        corroboration *
        distinct(
          this.versionDf,
          [...q.sig.version].filter((v) => doc.sig.version.has(v)),
        );
    const sharedOf = (k: 'area' | 'platform'): string[] => [...q.sig[k]].filter((v) => doc.sig[k].has(v));
    if (x.areaShared > 0) x.areaShared = corroboration * distinct(this.areaDf, sharedOf('area'));
    if (x.platformShared > 0)
      x.platformShared = corroboration * distinct(this.platformDf, sharedOf('platform'));
    x.statusShared *= corroboration;
    if (corroboration < 1 && (x.release > 0 || x.versionShared > 0 || x.areaShared > 0))
      reasons.push(`metadata weighed by corroboration ${round(corroboration)}`);
    // Recency is evidence by how much it singles the case out: on a busy channel, where every open
    // case is recent, it counts for nothing; on a quiet one, a case touched days ago stands out.
    if (q.at !== null && doc.lastAt !== null) {
      const days = Math.abs(q.at - doc.lastAt) / 86_400_000;
      x.recency = Math.max(0, recencyOf(days) - q.usualRecency);
      reasons.push(`${round(days)} day(s) after the case's newest report`);
    } else x.recency = 0;
    return { x, reasons, conflicts };
  }

  /**
   * The candidates a judge (a person or a model) would be shown for a report: the offline ranking's
   * head, best first, with each candidate's signals. Pure, like `decide`.
   */
  candidates(
    query: IdentityQuery,
    k = 5,
  ): Array<{
    caseId: string;
    confidence: number;
    features: Features;
    reasons: string[];
    conflicts: string[];
    /** How far its text stands above the best other candidate's (the link gate's margin). */
    margin: number;
  }> {
    return this.rank(query, this.query(query))
      .slice(0, k)
      .map((c) => ({
        caseId: c.doc.caseId,
        confidence: round(c.confidence),
        features: c.x,
        reasons: c.reasons,
        conflicts: c.conflicts,
        margin: c.margin,
      }));
  }

  private wordNorm(counts: Map<string, number>, n: number): number {
    let s = 0;
    for (const [t, c] of counts) {
      const w = tfw(c) * idfOf(this.postings.get(t)?.size ?? 0, n);
      s += w * w;
    }
    return Math.sqrt(s);
  }

  private dfNorm(df: Map<string, number>, counts: Map<string, number>, n: number): number {
    let s = 0;
    for (const [g, c] of counts) {
      const w = tfw(c) * idfOf(df.get(g) ?? 0, n);
      s += w * w;
    }
    return Math.sqrt(s);
  }

  private usualRecency(at: number | null): number {
    if (at === null) return 0;
    let sum = 0;
    let known = 0;
    for (const d of this.docs.values()) {
      if (d.lastAt === null) continue;
      sum += recencyOf(Math.abs(at - d.lastAt) / 86_400_000);
      known += 1;
    }
    // A few open cases say little about how busy the channel is: the mean is shrunk towards a quiet
    // channel's (no case touched lately) by one pseudo-case, so a lone recent case still counts half.
    return sum / (known + 1);
  }

  private dfOf(kind: SignatureKind): Map<string, number> | null {
    return kind === 'version'
      ? this.versionDf
      : kind === 'area'
        ? this.areaDf
        : kind === 'platform'
          ? this.platformDf
          : null;
  }

  private posting(t: string): Map<number, number> {
    let p = this.postings.get(t);
    if (!p) this.postings.set(t, (p = new Map()));
    return p;
  }

  private sigPosting(key: string): Set<number> {
    let p = this.sigPostings.get(key);
    if (!p) this.sigPostings.set(key, (p = new Set()));
    return p;
  }
}

/**
 * Whether a candidate's score is backed by a second signal: something shared that names the bug (a
 * technical signature, an HTTP status, the exact release build) or prose that singles the case out
 * among the candidates. A shared area ("settings", "sync") or major.minor version adds to the score
 * but is not a second signal: on one product's channel many different bugs share them.
 */
export function corroborated(x: Features, margin: number, minMargin: number): boolean {
  return x.strong > 0 || x.release > 0 || x.statusShared > 0 || margin >= minMargin;
}

interface Scored {
  doc: CaseDoc;
  /** The model's probability that the report is this case's bug, recency included. */
  confidence: number;
  /** The same without the help of recency: what an automatic link must clear. */
  linkConfidence: number;
  reasons: string[];
  conflicts: string[];
  x: Features;
  /** How far its text score stands above the best other candidate's (0 when it is not the best). */
  margin: number;
}

interface Query {
  words: Map<string, { w: number; idf: number }>;
  wordNorm: number;
  grams: Map<string, { w: number; idf: number }>;
  gramNorm: number;
  senses: Map<string, { w: number; idf: number }>;
  senseNorm: number;
  sig: Signatures;
  releases: Set<string>;
  at: number | null;
  /** The mean recency of the open cases for this query: what every candidate gets without singling out. */
  usualRecency: number;
  embedding: readonly number[] | null;
}

export const FEATURES = [
  'word',
  'gram',
  'sense',
  'embedding',
  'strong',
  'statusShared',
  'versionShared',
  'release',
  'areaShared',
  'platformShared',
  'versionConflict',
  'codeConflict',
  'areaConflict',
  'platformConflict',
  'recency',
] as const;
export type Feature = (typeof FEATURES)[number];
export type Features = Record<Feature, number>;
const ZERO_FEATURES: Features = Object.fromEntries(FEATURES.map((f) => [f, 0])) as Features;

/** Duplicates of one bug cluster after a release: a week apart weighs e^-0.5, two months ~0. */
const RECENCY_DAYS = 14;
const recencyOf = (days: number): number => Math.exp(-days / RECENCY_DAYS);

/** A logistic model over the signals: calibrated, so a confidence of 0.9 is right about 9 times in 10. */
export function confidenceOf(model: IdentityConfig['model'], x: Features): number {
  let z = model.bias;
  for (const f of FEATURES) z += (model[f] ?? 0) * x[f];
  return 1 / (1 + Math.exp(-z));
}

/** Cosine of a weighted query with a document bag, iterating the (short) query only. */
function bagCosine(
  q: Map<string, { w: number; idf: number }>,
  qnorm: number,
  bag: Bag,
  norm: number,
): number {
  if (qnorm === 0 || norm === 0) return 0;
  let dot = 0;
  for (const [t, { w, idf }] of q) {
    const c = bag.counts.get(t);
    if (c !== undefined) dot += w * tfw(c) * idf;
  }
  return Math.min(1, dot / (qnorm * norm));
}

/** The k best (slot, score) pairs, ties broken by slot for determinism. */
class TopK {
  private readonly items: Array<{ slot: number; s: number }> = [];
  constructor(private readonly k: number) {}
  offer(slot: number, s: number): void {
    const items = this.items;
    if (items.length === this.k) {
      const last = items[items.length - 1] as { slot: number; s: number };
      if (s < last.s || (s === last.s && slot > last.slot)) return;
      items.pop();
    }
    let i = items.length;
    while (i > 0) {
      const prev = items[i - 1] as { slot: number; s: number };
      if (prev.s > s || (prev.s === s && prev.slot < slot)) break;
      i--;
    }
    items.splice(i, 0, { slot, s });
  }
  slots(): number[] {
    return this.items.map((x) => x.slot);
  }
}

/**
 * Reasons are recorded in the ledger and may be shown to reviewers, so free text the reporter
 * wrote (quoted messages, URLs, paths) is counted, never copied: it can carry private context.
 */
function shown(kind: SignatureKind, values: readonly string[]): string {
  if (kind === 'quoted' || kind === 'url' || kind === 'path') return `${values.length} item(s)`;
  return values.slice(0, 3).join(', ');
}

function sharedQuotes(a: ReadonlySet<string>, b: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const x of a) {
    for (const y of b) {
      if (x === y || x.includes(y) || y.includes(x)) {
        out.push(x.length <= y.length ? x : y);
        continue;
      }
      const xs = new Set(x.split(' '));
      const ys = y.split(' ');
      const inter = ys.filter((w) => xs.has(w)).length;
      if (inter / Math.max(xs.size, ys.length) >= 0.8) out.push(x);
    }
  }
  return out;
}

function denseCosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
