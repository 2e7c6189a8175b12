import {
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
 * `npm run eval:identity -- --fit`: fits the matcher's logistic model on the TUNING split only and
 * prints the weights and a threshold grid. Training pairs come from an oracle replay: each report
 * is compared with the open cases of its channel as they were when it arrived (every earlier
 * report joined its true group), labelled by whether the candidate is its group.
 */
export function trainingPairs(reports: readonly CorpusReport[], input: IdentityConfigInput = {}) {
  const config = identityConfig(input);
  const pairs: Array<{ x: Features; y: 0 | 1 }> = [];
  let shouldJoin = 0;
  let retrieved = 0;
  const byChannel = new Map<string, CorpusReport[]>();
  for (const r of reports)
    byChannel.set(channelOf(r.group), [...(byChannel.get(channelOf(r.group)) ?? []), r]);
  for (const list of byChannel.values()) {
    const index = new IdentityIndex(config);
    const seen = new Set<string>();
    for (const r of [...list].sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : 0))) {
      const at = Date.parse(r.created);
      const cands = index.candidates({ text: r.text, at }, 40);
      if (seen.has(r.group)) {
        shouldJoin += 1;
        if (cands.slice(0, 5).some((c) => c.caseId === `g:${r.group}`)) retrieved += 1;
      }
      for (const c of cands) pairs.push({ x: c.features, y: c.caseId === `g:${r.group}` ? 1 : 0 });
      index.add(`g:${r.group}`, r.id, r.text, null, at);
      seen.add(r.group);
    }
  }
  return { pairs, shouldJoin, retrieved };
}

/** L2-regularised logistic regression by batch gradient descent (features are all in [0, 1]). */
export function fitLogistic(
  pairs: ReadonlyArray<{ x: Features; y: 0 | 1 }>,
  opts: { l2?: number; iterations?: number; rate?: number; fixed?: Partial<Record<string, number>> } = {},
): Record<'bias' | (typeof FEATURES)[number], number> {
  const l2 = opts.l2 ?? 0.02;
  const w: Record<string, number> = { bias: 0, ...Object.fromEntries(FEATURES.map((f) => [f, 0])) };
  const pos = pairs.filter((p) => p.y === 1).length;
  // Positives are rare; weight them so the fit is not just "always different".
  const wPos = pos > 0 ? Math.max(1, (pairs.length - pos) / pos / 4) : 1;
  for (let it = 0; it < (opts.iterations ?? 4000); it++) {
    const g: Record<string, number> = Object.fromEntries(Object.keys(w).map((k) => [k, 0]));
    let norm = 0;
    for (const p of pairs) {
      let z = w.bias as number;
      for (const f of FEATURES) z += (w[f] as number) * p.x[f];
      const err = 1 / (1 + Math.exp(-z)) - p.y;
      const s = p.y === 1 ? wPos : 1;
      norm += s;
      g.bias = (g.bias as number) + s * err;
      for (const f of FEATURES) g[f] = (g[f] as number) + s * err * p.x[f];
    }
    for (const k of Object.keys(w)) {
      if (opts.fixed && k in opts.fixed) {
        w[k] = opts.fixed[k] as number;
        continue;
      }
      const reg = k === 'bias' ? 0 : l2 * (w[k] as number);
      w[k] = (w[k] as number) - (opts.rate ?? 1) * ((g[k] as number) / norm + reg);
    }
  }
  return Object.fromEntries(Object.entries(w).map(([k, v]) => [k, Math.round(v * 100) / 100])) as never;
}

if (require.main === module) {
  const tune = loadCorpus().filter((r) => splitOf(r.group) === 'tune');
  const { pairs, shouldJoin, retrieved } = trainingPairs(tune);
  console.log(
    `tuning pairs: ${pairs.length} (${pairs.filter((p) => p.y).length} same group); true case in top 5: ${retrieved}/${shouldJoin}`,
  );
  // No embeddings adapter in the corpus: its weight stays at the default.
  const model = fitLogistic(pairs, {
    fixed: { embedding: DEFAULT_MODEL.embedding, recency: DEFAULT_MODEL.recency },
  });
  console.log(JSON.stringify(model));
  const corpus = loadCorpus();
  for (const link of [0.5, 0.6, 0.7, 0.8, 0.9]) {
    for (const review of [0.1, 0.15, 0.2, 0.25, 0.3, 0.4]) {
      if (review > link) continue;
      const f = identityFigures(corpus, 'tune', { model, linkThreshold: link, reviewThreshold: review });
      console.log(
        `link>=${link} review>=${review}: precision ${f.autoLinkPrecision.value} (${f.autoLinkPrecision.successes}/${f.autoLinkPrecision.trials}) recall ${f.linkOrReviewRecall.value} load ${f.reviewLoad.value}`,
      );
    }
  }
}
