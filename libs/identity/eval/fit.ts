import {
  confidenceOf,
  corroborated,
  DEFAULT_MODEL,
  FEATURES,
  Features,
  identityConfig,
  IdentityConfigInput,
  IdentityIndex,
} from '@caseloop/identity';
import { channelOf, CorpusReport, loadCorpus, splitOf } from './corpus';
import { identityFigures } from './identity.eval';

/**
 * `npm run eval:identity:fit [-- --l2 0.003] [--cv]`: fits the matcher's logistic model on the TUNING
 * split only and prints the weights and a threshold grid. Training pairs come from an oracle replay:
 * each report is compared with the open cases of its channel as they were when it arrived (every
 * earlier report joined its true group), labelled by whether the candidate is its group.
 * `--cv` estimates, for several regularisation strengths, what each would do on a channel it was
 * not fitted on (leave one tuning channel out), which is how the default strength was chosen.
 */
export interface Pair {
  x: Features;
  y: 0 | 1;
  channel: string;
  report: string;
  /** Whether the report's group already had a case when it arrived. */
  join: boolean;
  conflicts: number;
  /** How far its text stands above the best other candidate's. */
  margin: number;
}

export function trainingPairs(reports: readonly CorpusReport[], input: IdentityConfigInput = {}) {
  const config = identityConfig(input);
  const pairs: Pair[] = [];
  let shouldJoin = 0;
  let retrieved = 0;
  const byChannel = new Map<string, CorpusReport[]>();
  for (const r of reports)
    byChannel.set(channelOf(r.group), [...(byChannel.get(channelOf(r.group)) ?? []), r]);
  for (const [channel, list] of byChannel) {
    const index = new IdentityIndex(config);
    const seen = new Set<string>();
    for (const r of [...list].sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : 0))) {
      const at = Date.parse(r.created);
      const cands = index.candidates({ text: r.text, at }, 40);
      const join = seen.has(r.group);
      if (join) {
        shouldJoin += 1;
        if (cands.slice(0, 5).some((c) => c.caseId === `g:${r.group}`)) retrieved += 1;
      }
      for (const c of cands)
        pairs.push({
          x: c.features,
          y: c.caseId === `g:${r.group}` ? 1 : 0,
          channel,
          report: r.id,
          join,
          conflicts: c.conflicts.length,
          margin: c.margin,
        });
      index.add(`g:${r.group}`, r.id, r.text, null, at);
      seen.add(r.group);
    }
  }
  return { pairs, shouldJoin, retrieved };
}

export type Model = Record<'bias' | (typeof FEATURES)[number], number>;

/** L2-regularised logistic regression by batch gradient descent (features are all in [0, 1]). */
export function fitLogistic(
  pairs: ReadonlyArray<{ x: Features; y: 0 | 1 }>,
  opts: { l2?: number; iterations?: number; rate?: number; fixed?: Partial<Record<string, number>> } = {},
): Model {
  const l2 = opts.l2 ?? DEFAULT_L2;
  const keys = ['bias', ...FEATURES] as const;
  const d = keys.length;
  const n = pairs.length;
  const X = new Float64Array(n * d);
  pairs.forEach((p, i) => {
    X[i * d] = 1;
    FEATURES.forEach((f, j) => (X[i * d + j + 1] = p.x[f]));
  });
  const w = new Float64Array(d);
  const fixed = keys.map((k) => opts.fixed?.[k]);
  fixed.forEach((v, j) => v !== undefined && (w[j] = v));
  const pos = pairs.filter((p) => p.y === 1).length;
  // Positives are rare; weight them so the fit is not just "always different".
  const wPos = pos > 0 ? Math.max(1, (n - pos) / pos / 4) : 1;
  const norm = pos * wPos + (n - pos);
  const g = new Float64Array(d);
  for (let it = 0; it < (opts.iterations ?? 4000); it++) {
    g.fill(0);
    for (let i = 0; i < n; i++) {
      let z = 0;
      for (let j = 0; j < d; j++) z += (w[j] as number) * (X[i * d + j] as number);
      const y = (pairs[i] as { y: 0 | 1 }).y;
      const e = (1 / (1 + Math.exp(-z)) - y) * (y === 1 ? wPos : 1);
      for (let j = 0; j < d; j++) g[j] = (g[j] as number) + e * (X[i * d + j] as number);
    }
    for (let j = 0; j < d; j++) {
      if (fixed[j] !== undefined) continue;
      const reg = j === 0 ? 0 : l2 * (w[j] as number);
      w[j] = (w[j] as number) - (opts.rate ?? 1) * ((g[j] as number) / norm + reg);
    }
  }
  return Object.fromEntries(keys.map((k, j) => [k, Math.round((w[j] as number) * 100) / 100])) as Model;
}

/** Regularisation of the default fit, chosen by `--cv` on the tuning channels. */
export const DEFAULT_L2 = 0.003;
/**
 * Not fitted: no embeddings adapter in the corpus, and recency is held at 1 because the corpus
 * channels are sparse in time (a free fit leans on it; on a busy channel every case is recent).
 */
const FIXED = { embedding: DEFAULT_MODEL.embedding, recency: DEFAULT_MODEL.recency };

/**
 * Leave-one-channel-out estimate on the tuning split: each channel's pairs are scored by a model
 * fitted on the other channels. Per report the best candidate decides, as in the matcher: a link
 * needs the time-neutral score over the lowest threshold that made no wrong link, the rest are
 * taken best first up to a review budget. Returns the share of should-join reports found.
 */
export function crossValidate(
  pairs: readonly Pair[],
  l2: number,
  budgets: readonly number[],
  opts: {
    busy?: boolean;
    reports: number;
    fixed?: Partial<Record<string, number>>;
    /** The link gate's margin (`linkGate.margin`): 0 lets any score link, 1 asks for a shared signal. */
    gateMargin?: number;
  },
) {
  const busy = opts.busy ?? false;
  const channels = [...new Set(pairs.map((p) => p.channel))];
  const scored: Array<{ p: Pair; full: number; timeless: number }> = [];
  for (const c of channels) {
    const model = fitLogistic(
      pairs.filter((p) => p.channel !== c),
      { l2, fixed: opts.fixed ?? FIXED },
    );
    for (const p of pairs.filter((q) => q.channel === c)) {
      // Busy: every open case recent, so recency singles none out.
      const full = confidenceOf(model, busy ? { ...p.x, recency: 0 } : p.x);
      const timeless = Math.min(full, confidenceOf(model, { ...p.x, recency: 0 }));
      scored.push({ p, full, timeless });
    }
  }
  const best = new Map<string, (typeof scored)[number]>();
  for (const s of scored) {
    const b = best.get(s.p.report);
    if (!b || s.full > b.full) best.set(s.p.report, s);
  }
  const tops = [...best.values()];
  const gateMargin = opts.gateMargin ?? identityConfig().linkGate.margin;
  const linkable = (s: (typeof tops)[number]): boolean =>
    s.p.conflicts === 0 && corroborated(s.p.x, s.p.margin, gateMargin);
  const wrong = tops.filter((s) => linkable(s) && s.p.y === 0).map((s) => s.timeless);
  const linkAt = wrong.length ? Math.max(...wrong) + 1e-9 : 0;
  const links = tops.filter((s) => linkable(s) && s.timeless >= linkAt);
  const rest = tops.filter((s) => !links.includes(s)).sort((a, b) => b.full - a.full);
  // Reports that had no candidate at all count too: they are part of the load's denominator.
  const reports = opts.reports;
  const joins = new Set(pairs.filter((p) => p.join).map((p) => p.report)).size;
  return {
    l2,
    busy,
    links: links.length,
    recall: budgets.map((b) => {
      const found = rest.slice(0, Math.floor(b * reports)).filter((s) => s.p.y === 1).length;
      return { load: b, recall: Math.round(((links.length + found) / joins) * 1000) / 1000 };
    }),
  };
}

if (require.main === module) {
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const tune = loadCorpus().filter((r) => splitOf(r.group) === 'tune');
  const { pairs, shouldJoin, retrieved } = trainingPairs(tune);
  console.log(
    `tuning pairs: ${pairs.length} (${pairs.filter((p) => p.y).length} same group); true case in top 5: ${retrieved}/${shouldJoin}`,
  );
  // `--drop a,b` holds those signals at 0 (the model without them), `--l2s` lists the strengths to
  // cross-validate, `--gate-margin` sets the link gate's margin (0: no gate; 1: a shared signal always).
  const fixed = {
    ...FIXED,
    ...Object.fromEntries(
      (arg('--drop') ?? '')
        .split(',')
        .filter(Boolean)
        .map((f) => [f, 0]),
    ),
  };
  if (process.argv.includes('--cv')) {
    const strengths = (arg('--l2s') ?? '0.03,0.01,0.003,0.001').split(',').map(Number);
    for (const l2 of strengths)
      for (const busy of [false, true])
        console.log(
          JSON.stringify(
            crossValidate(pairs, l2, [0.15, 0.2, 0.25], {
              busy,
              reports: tune.length,
              fixed,
              gateMargin: arg('--gate-margin') === undefined ? undefined : Number(arg('--gate-margin')),
            }),
          ),
        );
  }
  const model = fitLogistic(pairs, { l2: Number(arg('--l2') ?? DEFAULT_L2), fixed });
  console.log(JSON.stringify(model));
  if (process.argv.includes('--no-grid')) process.exit(0);
  const corpus = loadCorpus();
  const links = (arg('--links') ?? '0.6,0.7,0.8,0.9').split(',').map(Number);
  const reviews = (arg('--reviews') ?? '0.2,0.25,0.3,0.35,0.4,0.45,0.5').split(',').map(Number);
  const figure = (p: ReturnType<typeof identityFigures>['autoLinkPrecision']): string =>
    `${p.value} (${p.successes}/${p.trials})`;
  for (const link of links) {
    for (const review of reviews) {
      if (review > link) continue;
      const cfg = { model, linkThreshold: link, reviewThreshold: review };
      const f = identityFigures(corpus, 'tune', cfg);
      // The same replay with one timestamp for all: a busy channel, where recency tells nothing.
      const b = identityFigures(corpus, 'tune', cfg, { busy: true });
      console.log(
        `link>=${link} review>=${review}: precision ${figure(f.autoLinkPrecision)} recall ${f.linkOrReviewRecall.value} load ${f.reviewLoad.value} | busy: precision ${figure(b.autoLinkPrecision)} recall ${b.linkOrReviewRecall.value} load ${b.reviewLoad.value}`,
      );
    }
  }
}
