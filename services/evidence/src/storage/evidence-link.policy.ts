import type { RecordedEvent } from '@caseloop/contracts';

/**
 * May this stored artifact be linked for reviewers? Only if it was stored (read back, verified)
 * and its review cleared it — or an allowlisted reviewer approved its digest since.
 */
export function isShareable(events: readonly RecordedEvent[], key: string): boolean {
  const stored = events.find((e) => e.type === 'ArtifactStored' && e.data.key === key);
  if (stored?.type !== 'ArtifactStored') return false;
  const review = events
    .filter((e) => e.type === 'ArtifactReviewed' && e.data.artifactId === stored.data.artifactId)
    .at(-1);
  if (review?.type !== 'ArtifactReviewed') return false;
  switch (review.data.decision) {
    case 'cleared':
    case 'redacted':
      return true;
    case 'needs_human':
      return events.some((e) => e.type === 'PrivacyApproved' && e.data.artifactSha256 === stored.data.sha256);
    case 'rejected':
      return false;
  }
}

/** The stable address a receipt links to; the evidence service answers it with a fresh short-lived link. */
export const evidenceLinkUrl = (publicBaseUrl: string, key: string): string =>
  `${publicBaseUrl.replace(/\/+$/, '')}/evidence/${key}`;
