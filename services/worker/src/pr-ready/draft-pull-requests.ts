import { TargetRepository } from '@caseloop/target-repositories';

/**
 * Opens or updates a DRAFT pull request for a pushed case branch. Implementations never merge and
 * never approve: a human does both, in the forge, after reading the receipt.
 */
export interface DraftPullRequests {
  /** The pull request's URL. */
  openOrUpdate(repo: TargetRepository, pr: { branch: string; title: string; body: string }): Promise<string>;
}
