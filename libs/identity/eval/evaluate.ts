import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DEFAULT_MODEL,
  evaluateIdentity,
  identityConfig,
  IdentityConfigInput,
  replayReportSchema,
} from '@caseloop/identity';

/** Prints precision/recall of the identity matcher on the labelled set (JSON lines). */
export function loadEvalSet(dir = __dirname, set: 'reports' | 'holdout' = 'reports') {
  const [reportsFile, labelsFile] =
    set === 'reports' ? ['reports.jsonl', 'labels.jsonl'] : ['holdout.jsonl', 'holdout.labels.jsonl'];
  const reports = readFileSync(join(dir, reportsFile), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => replayReportSchema.parse(JSON.parse(l)));
  const labels = new Map<string, string>(
    readFileSync(join(dir, labelsFile), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => {
        const { id, cluster } = JSON.parse(l) as { id: string; cluster: string };
        return [id, cluster] as const;
      }),
  );
  return { reports, labels };
}

if (require.main === module) {
  const set = process.argv.includes('--holdout') ? 'holdout' : 'reports';
  const { reports, labels } = loadEvalSet(__dirname, set);
  const variants: Array<[string, IdentityConfigInput]> = [['default', {}]];
  if (process.argv.includes('--ablation')) {
    const off = (...fs: Array<keyof typeof DEFAULT_MODEL>): IdentityConfigInput => ({
      model: { ...DEFAULT_MODEL, ...Object.fromEntries(fs.map((f) => [f, 0])) },
    });
    variants.push(['no_senses', off('sense')]);
    variants.push(['no_recency', off('recency')]);
    variants.push([
      'text_only',
      off(
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
      ),
    ]);
  }
  for (const [name, cfg] of variants) {
    const r = evaluateIdentity(reports, labels, identityConfig(cfg));
    const verbose = process.argv.includes('--verbose');
    console.log(
      JSON.stringify({
        set,
        variant: name,
        reports: r.reports,
        clusters: new Set(labels.values()).size,
        should_join: r.shouldJoin,
        link_precision: r.link.precision,
        link_recall: r.link.recall,
        link_predicted: r.link.predicted,
        link_or_review_precision: r.linkOrReview.precision,
        link_or_review_recall: r.linkOrReview.recall,
        link_or_review_predicted: r.linkOrReview.predicted,
        wrong_links: r.wrongLinks.length,
        ...(verbose ? { wrong: r.wrongLinks, missed: r.missed } : {}),
      }),
    );
  }
}
