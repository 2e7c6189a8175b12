import { IdentityConfig } from './identity.config';
import { IdentityIndex } from './identity-index';
import { ReplayLine, ReplayReport, replayReports } from './replay';

export interface EvaluationResult {
  reports: number;
  /** Reports whose cluster already had a case when they arrived: the ones that should join. */
  shouldJoin: number;
  link: { predicted: number; correct: number; precision: number; recall: number };
  linkOrReview: { predicted: number; correct: number; precision: number; recall: number };
  /** Reports wrongly joined to another cluster's case: a silent merge, the costly error. */
  wrongLinks: Array<{ id: string; into: string; confidence: number }>;
  missed: Array<{ id: string; cluster: string; decision: string; confidence: number }>;
  lines: ReplayLine[];
}

const ratio = (a: number, b: number): number => (b === 0 ? 1 : Math.round((a / b) * 1000) / 1000);

/**
 * Precision and recall of `link` and of `link|review` against cluster labels, replaying the
 * reports in time order. A case's cluster is the cluster of the report that opened it; held
 * reports are settled by the labels (as a human reviewer would), so later reports see the same
 * open cases the service would.
 */
export function evaluateIdentity(
  reports: readonly ReplayReport[],
  clusterOf: ReadonlyMap<string, string>,
  config: IdentityConfig,
): EvaluationResult {
  const caseCluster = new Map<string, string>();
  const index = new IdentityIndex(config);
  const shouldJoinIds = new Set<string>();
  const seenClusters = new Set<string>();
  const lines = replayReports(reports, index, {
    caseIdFor: (r) => {
      caseCluster.set(`case-${r.id}`, clusterOf.get(r.id) ?? r.id);
      return `case-${r.id}`;
    },
    settle: (r, candidate) => (caseCluster.get(candidate) === clusterOf.get(r.id) ? 'same' : 'different'),
  });
  // shouldJoin is computed over arrival order: a cluster has a case once its first report arrived.
  for (const l of lines) {
    const cl = clusterOf.get(l.id) ?? l.id;
    if (seenClusters.has(cl)) shouldJoinIds.add(l.id);
    seenClusters.add(cl);
  }
  const right = (l: ReplayLine): boolean =>
    l.matchedWith !== null && caseCluster.get(l.matchedWith) === (clusterOf.get(l.id) ?? l.id);
  const links = lines.filter((l) => l.decision === 'link');
  const held = lines.filter((l) => l.decision === 'link' || l.decision === 'review');
  const linkCorrect = links.filter(right).length;
  const heldCorrect = held.filter(right).length;
  return {
    reports: lines.length,
    shouldJoin: shouldJoinIds.size,
    link: {
      predicted: links.length,
      correct: linkCorrect,
      precision: ratio(linkCorrect, links.length),
      recall: ratio(linkCorrect, shouldJoinIds.size),
    },
    linkOrReview: {
      predicted: held.length,
      correct: heldCorrect,
      precision: ratio(heldCorrect, held.length),
      recall: ratio(heldCorrect, shouldJoinIds.size),
    },
    wrongLinks: links
      .filter((l) => !right(l))
      .map((l) => ({ id: l.id, into: l.matchedWith ?? '', confidence: l.confidence })),
    missed: lines
      .filter((l) => shouldJoinIds.has(l.id) && !(l.decision !== 'new' && right(l)))
      .map((l) => ({
        id: l.id,
        cluster: clusterOf.get(l.id) ?? '',
        decision: l.decision,
        confidence: l.confidence,
      })),
    lines,
  };
}
