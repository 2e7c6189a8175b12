import { TargetRepository } from '@caseloop/target-repositories';

/**
 * Opens or updates a DRAFT pull request for a pushed case branch. Implementations have no way to
 * merge or approve: a human does both, in the forge, after reading the receipt.
 */
export interface DraftPullRequests {
  /** The pull request's URL, or null when this forge does not host the repository. */
  openOrUpdate(
    repo: TargetRepository,
    pr: { branch: string; title: string; body: string },
  ): Promise<string | null>;
}
