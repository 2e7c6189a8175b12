import {
  evaluateIdentity,
  formatProportion,
  identityConfig,
  IdentityConfigInput,
  IdentityIndex,
  inTimeOrder,
  ReplayReport,
  wilson,
} from '@caseloop/identity';
import { channelOf, CorpusReport, loadCorpus, Split, splitOf } from './corpus';

/**
 * `npm run eval:identity [-- --split tune|heldout|all] [--busy] [--verbose] [--json]`: replays the
 * real-report corpus through the offline matcher, one split at a time (a split is one channel: reports
 * of every product in it, in time order), and prints the figures the defaults are held to, with 95 %
 * Wilson intervals. Held reviews are settled by the labels, as a reviewer would. `--busy` replays the
 * same order with one timestamp for every report (a busy channel: every open case is recent).
 * `--misses` lists the tuning split's errors (only that split's) for error analysis.
 */
export interface IdentityFigures {
  split: Split | 'all';
  channels: number;
  reports: number;
  products: number;
  groups: number;
  shouldJoin: number;
  autoLinkPrecision: ReturnType<typeof wilson>;
  linkOrReviewRecall: ReturnType<typeof wilson>;
  reviewLoad: ReturnType<typeof wilson>;
  wrongLinks: Array<{ id: string; into: string; confidence: number }>;
  missed: Array<{ id: string; cluster: string; decision: string; confidence: number }>;
}

const BUSY_AT = '2025-01-01T00:00:00Z';

export function identityFigures(
  reports: readonly CorpusReport[],
  split: Split | 'all',
  input: IdentityConfigInput = {},
  options: { busy?: boolean } = {},
): IdentityFigures {
  const chosen = reports.filter((r) => split === 'all' || splitOf(r.group) === split);
  const byChannel = new Map<string, CorpusReport[]>();
  for (const r of chosen) {
    const c = channelOf(r.group);
    byChannel.set(c, [...(byChannel.get(c) ?? []), r]);
  }
  const config = identityConfig(input);
  let links = 0;
  let linksRight = 0;
  let held = 0;
  let shouldJoin = 0;
  let reviews = 0;
  let total = 0;
  const wrongLinks: IdentityFigures['wrongLinks'] = [];
  const missed: IdentityFigures['missed'] = [];
  for (const [, list] of [...byChannel].sort(([a], [b]) => (a < b ? -1 : 1))) {
    let labels = new Map(list.map((r) => [r.id, r.group]));
    let replay: ReplayReport[] = list.map((r) => ({ id: r.id, text: r.text, created: r.created }));
    if (options.busy) {
      // A busy channel: the same reports in the same order, all written at one moment, so every
      // open case looks recent and recency tells nothing (ids keep the order: replay sorts by id).
      const ordered = inTimeOrder(replay);
      const key = (i: number, id: string): string => `${String(i).padStart(5, '0')}:${id}`;
      labels = new Map(ordered.map((r, i) => [key(i, r.id), labels.get(r.id) as string]));
      replay = ordered.map((r, i) => ({ ...r, id: key(i, r.id), created: BUSY_AT }));
    }
    const res = evaluateIdentity(replay, labels, config);
    links += res.link.predicted;
    linksRight += res.link.correct;
    held += res.linkOrReview.correct;
    shouldJoin += res.shouldJoin;
    reviews += res.lines.filter((l) => l.decision === 'review').length;
    total += res.reports;
    wrongLinks.push(...res.wrongLinks);
    missed.push(...res.missed);
  }
  const channels = byChannel.size;
  return {
    split,
    channels,
    reports: total,
    products: new Set(chosen.map((r) => r.product)).size,
    groups: new Set(chosen.map((r) => r.group)).size,
    shouldJoin,
    autoLinkPrecision: wilson(linksRight, links),
    linkOrReviewRecall: wilson(held, shouldJoin),
    reviewLoad: wilson(reviews, total),
    wrongLinks,
    missed,
  };
}

/** One report of the tuning split that the matcher got wrong, with what it saw. */
export interface TuneMiss {
  kind: 'wrong_link' | 'missed' | 'needless_review';
  id: string;
  group: string;
  decision: string;
  confidence: number;
  /** The group of the case it was matched with (null: none). */
  matchedGroup: string | null;
  /** The open case of its own group: its rank among candidates (1-based, null when not ranked) and score. */
  trueRank: number | null;
  trueConfidence: number | null;
  trueReasons: string[];
  bestReasons: string[];
}

/**
 * Error analysis of the TUNING split only: replays it as `identityFigures` does (reviews settled by
 * the labels) and lists false links, missed duplicates (with where their own case ranked) and reviews
 * of a report whose group had no open case or whose candidate was another group's. The held-out
 * split is refused: it is only ever scored, never read for errors.
 */
export function tuneMisses(reports: readonly CorpusReport[], input: IdentityConfigInput = {}): TuneMiss[] {
  const config = identityConfig(input);
  const byChannel = new Map<string, CorpusReport[]>();
  for (const r of reports.filter((x) => splitOf(x.group) === 'tune')) {
    const c = channelOf(r.group);
    byChannel.set(c, [...(byChannel.get(c) ?? []), r]);
  }
  const out: TuneMiss[] = [];
  for (const [, list] of [...byChannel].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const group = new Map(list.map((r) => [r.id, r.group]));
    const caseGroup = new Map<string, string>();
    const openOf = new Map<string, string>();
    const index = new IdentityIndex(config);
    const replay = inTimeOrder(list.map((r) => ({ id: r.id, text: r.text, created: r.created })));
    for (const r of replay) {
      const g = group.get(r.id) as string;
      const parsed = Date.parse(r.created);
      const at = Number.isFinite(parsed) ? parsed : null;
      const d = index.decide({ text: r.text, at });
      const cands = index.candidates({ text: r.text, at }, 40);
      const own = openOf.get(g);
      const matchedGroup = d.matchedWith ? (caseGroup.get(d.matchedWith) ?? null) : null;
      const right = d.decision !== 'new' && own !== undefined && d.matchedWith === own;
      const ti = own === undefined ? -1 : cands.findIndex((c) => c.caseId === own);
      const base = {
        id: r.id,
        group: g,
        decision: d.decision,
        confidence: d.confidence,
        matchedGroup,
        trueRank: ti >= 0 ? ti + 1 : null,
        trueConfidence: ti >= 0 ? (cands[ti]?.confidence ?? null) : null,
        trueReasons: ti >= 0 ? (cands[ti]?.reasons ?? []) : [],
        bestReasons: d.reasons,
      };
      if (d.decision === 'link' && !right) out.push({ kind: 'wrong_link', ...base });
      else if (own !== undefined && !right) out.push({ kind: 'missed', ...base });
      else if (d.decision === 'review' && !right) out.push({ kind: 'needless_review', ...base });
      // Settle as the evaluation does: a right link or review joins the case, anything else opens one.
      if (right && d.matchedWith) index.add(d.matchedWith, r.id, r.text, null, at);
      else if (d.decision === 'link' && d.matchedWith) index.add(d.matchedWith, r.id, r.text, null, at);
      else {
        const id = `case-${r.id}`;
        caseGroup.set(id, g);
        if (!openOf.has(g)) openOf.set(g, id);
        index.add(id, r.id, r.text, null, at);
      }
    }
  }
  return out;
}

if (require.main === module) {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const splits = ((arg('--split') ?? 'tune,heldout').split(',') as Array<Split | 'all'>).filter(Boolean);
  const corpus = loadCorpus();
  if (process.argv.includes('--misses')) {
    // Tuning split only, by construction: held-out errors are never listed.
    const ms = tuneMisses(corpus);
    const byId = new Map(corpus.map((r) => [r.id, r]));
    for (const m of ms) {
      if (process.argv.includes('--json')) {
        console.log(JSON.stringify({ ...m, text: byId.get(m.id)?.text }));
        continue;
      }
      console.log(
        `${m.kind.toUpperCase()} ${m.id} [${m.group}] ${m.decision} ${m.confidence} best=${m.matchedGroup ?? '-'} own rank=${m.trueRank ?? '-'} own=${m.trueConfidence ?? '-'}`,
      );
      console.log(`    ${byId.get(m.id)?.text.slice(0, 200).replace(/\n/g, ' ')}`);
      console.log(`    best: ${m.bestReasons.join('; ').slice(0, 300)}`);
      if (m.trueRank !== null && m.trueRank > 1)
        console.log(`    own:  ${m.trueReasons.join('; ').slice(0, 300)}`);
    }
    const count = (k: TuneMiss['kind']): number => ms.filter((m) => m.kind === k).length;
    console.log(
      `tune: ${count('wrong_link')} wrong links, ${count('missed')} missed, ${count('needless_review')} needless reviews`,
    );
    process.exit(0);
  }
  for (const split of splits) {
    const f = identityFigures(corpus, split, {}, { busy: process.argv.includes('--busy') });
    if (process.argv.includes('--json')) {
      console.log(
        JSON.stringify(
          process.argv.includes('--verbose')
            ? f
            : { ...f, wrongLinks: f.wrongLinks.length, missed: f.missed.length },
        ),
      );
      continue;
    }
    console.log(
      `identity ${split}${process.argv.includes('--busy') ? ' (busy: one timestamp)' : ''}: ${f.reports} reports, ${f.channels} channels, ${f.products} products, ${f.groups} groups, ${f.shouldJoin} should join an open case`,
    );
    console.log(`  auto-link precision    ${formatProportion(f.autoLinkPrecision)}   target >= 0.95`);
    console.log(`  link-or-review recall  ${formatProportion(f.linkOrReviewRecall)}   target >= 0.85`);
    console.log(`  review load per report ${formatProportion(f.reviewLoad)}   target <= 0.20`);
    if (process.argv.includes('--verbose')) {
      const byId = new Map(corpus.map((r) => [r.id, r]));
      for (const w of f.wrongLinks)
        console.log(`  WRONG ${w.id} -> ${w.into} (${w.confidence}): ${byId.get(w.id)?.text.slice(0, 90)}`);
      for (const m of f.missed)
        console.log(
          `  MISSED ${m.id} ${m.decision} ${m.confidence} [${m.cluster}]: ${byId.get(m.id)?.text.slice(0, 90)}`,
        );
    }
  }
}
