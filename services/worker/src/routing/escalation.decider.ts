/**
 * Which route the next attempt takes. Pure: the attempts come from the case's events.
 *
 * One normal route for every attempt. One escalation route, at most once per case, only after two
 * *distinct* attempts (their diffs differ) failed the *same* focused check, and always from a clean
 * worktree so the stronger route does not inherit the weaker route's wrong turn. Identical diffs are
 * one idea tried twice; different failing checks are not yet a pattern.
 */
export interface FinishedAttempt {
  attemptId: string;
  route: 'normal' | 'escalation';
  /** sha-256 of the attempt's whole change against the base revision; null when it changed nothing. */
  diffSha256: string | null;
  /** The first failing check of kind `focused_test`, if any. */
  firstFailedFocusedCheck: string | null;
  passed: boolean;
}

export interface RoutingInput {
  /** Every finished attempt of the case, oldest first. */
  attempts: readonly FinishedAttempt[];
  /** Normal attempts already made in the current round. */
  normalAttemptsInRound: number;
  maxAttempts: number;
  escalationConfigured: boolean;
  escalationUsed: boolean;
}

export type RouteDecision =
  | { route: 'normal'; fromCleanTree: false }
  | { route: 'escalation'; fromCleanTree: true; failedAttemptIds: [string, string]; focusedCheck: string }
  | { route: 'none'; reason: 'attempts_exhausted' };

export function findEscalationPair(
  attempts: readonly FinishedAttempt[],
): { pair: [string, string]; check: string } | null {
  const failed = attempts.filter(
    (a) => a.route === 'normal' && !a.passed && a.diffSha256 !== null && a.firstFailedFocusedCheck !== null,
  );
  for (let later = failed.length - 1; later > 0; later--) {
    const l = failed[later] as FinishedAttempt;
    for (let earlier = later - 1; earlier >= 0; earlier--) {
      const e = failed[earlier] as FinishedAttempt;
      if (e.firstFailedFocusedCheck === l.firstFailedFocusedCheck && e.diffSha256 !== l.diffSha256) {
        return { pair: [e.attemptId, l.attemptId], check: l.firstFailedFocusedCheck as string };
      }
    }
  }
  return null;
}

export function decideNextRoute(input: RoutingInput): RouteDecision {
  if (input.escalationConfigured && !input.escalationUsed) {
    const found = findEscalationPair(input.attempts);
    if (found)
      return {
        route: 'escalation',
        fromCleanTree: true,
        failedAttemptIds: found.pair,
        focusedCheck: found.check,
      };
  }
  if (input.normalAttemptsInRound < input.maxAttempts) return { route: 'normal', fromCleanTree: false };
  return { route: 'none', reason: 'attempts_exhausted' };
}
