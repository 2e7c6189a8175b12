import {
  evaluateIdentity,
  formatProportion,
  identityConfig,
  IdentityConfigInput,
  ReplayReport,
  wilson,
} from '@caseloop/identity';
import { channelOf, CorpusReport, loadCorpus, Split, splitOf } from './corpus';

/**
 * `npm run eval:identity [-- --split tune|heldout|all] [--verbose] [--json]`: replays the real-report
 * corpus through the offline matcher, one split at a time (a split is one channel: reports of every
 * product in it, in time order), and prints the figures the defaults are held to, with 95 % Wilson
 * intervals. Held reviews are settled by the labels, as a reviewer would.
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

export function identityFigures(
  reports: readonly CorpusReport[],
  split: Split | 'all',
  input: IdentityConfigInput = {},
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
    const labels = new Map(list.map((r) => [r.id, r.group]));
    const replay: ReplayReport[] = list.map((r) => ({ id: r.id, text: r.text, created: r.created }));
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

if (require.main === module) {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const splits = ((arg('--split') ?? 'tune,heldout').split(',') as Array<Split | 'all'>).filter(Boolean);
  const corpus = loadCorpus();
  for (const split of splits) {
    const f = identityFigures(corpus, split);
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
      `identity ${split}: ${f.reports} reports, ${f.channels} channels, ${f.products} products, ${f.groups} groups, ${f.shouldJoin} should join an open case`,
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
