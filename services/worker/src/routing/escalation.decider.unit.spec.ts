import { decideNextRoute, FinishedAttempt, RoutingInput } from './escalation.decider';

const sha = (c: string) => c.repeat(64);
const failed = (
  attemptId: string,
  diff: string | null,
  check: string | null,
  route: 'normal' | 'escalation' = 'normal',
): FinishedAttempt => ({
  attemptId,
  route,
  diffSha256: diff === null ? null : sha(diff),
  firstFailedFocusedCheck: check,
  passed: false,
});

const given = (attempts: FinishedAttempt[], over: Partial<RoutingInput> = {}): RoutingInput => ({
  attempts,
  normalAttemptsInRound: attempts.filter((a) => a.route === 'normal').length,
  maxAttempts: 5,
  escalationConfigured: true,
  escalationUsed: attempts.some((a) => a.route === 'escalation'),
  ...over,
});

describe('escalation routing', () => {
  it('given no attempt, when deciding, then the normal route', () => {
    expect(decideNextRoute(given([]))).toEqual({ route: 'normal', fromCleanTree: false });
  });

  it('given one failed attempt, then no escalation', () => {
    expect(decideNextRoute(given([failed('a1', 'a', 'cart')])).route).toBe('normal');
  });

  it('given two attempts with identical diffs failing the same check, then no escalation', () => {
    expect(decideNextRoute(given([failed('a1', 'a', 'cart'), failed('a2', 'a', 'cart')])).route).toBe(
      'normal',
    );
  });

  it('given two distinct diffs failing different checks, then no escalation', () => {
    expect(decideNextRoute(given([failed('a1', 'a', 'cart'), failed('a2', 'b', 'checkout')])).route).toBe(
      'normal',
    );
  });

  it('given two distinct diffs failing the same focused check, then escalation once, from a clean tree', () => {
    expect(decideNextRoute(given([failed('a1', 'a', 'cart'), failed('a2', 'b', 'cart')]))).toEqual({
      route: 'escalation',
      fromCleanTree: true,
      failedAttemptIds: ['a1', 'a2'],
      focusedCheck: 'cart',
    });
  });

  it('given the pair is not adjacent (a different failure in between), then it still counts', () => {
    const d = decideNextRoute(
      given([failed('a1', 'a', 'cart'), failed('a2', 'b', 'lint-only'), failed('a3', 'c', 'cart')]),
    );
    expect(d).toMatchObject({ route: 'escalation', failedAttemptIds: ['a1', 'a3'] });
  });

  it('given the escalation was used and two more distinct attempts fail the same check, then never a second time', () => {
    const attempts = [
      failed('a1', 'a', 'cart'),
      failed('a2', 'b', 'cart'),
      failed('a3', 'e', 'cart', 'escalation'),
      failed('a4', 'c', 'cart'),
      failed('a5', 'd', 'cart'),
    ];
    expect(decideNextRoute(given(attempts, { normalAttemptsInRound: 4 })).route).toBe('normal');
    expect(decideNextRoute(given(attempts, { normalAttemptsInRound: 5 }))).toEqual({
      route: 'none',
      reason: 'attempts_exhausted',
    });
  });

  it('given attempts that changed nothing, then they are not distinct attempts', () => {
    expect(decideNextRoute(given([failed('a1', null, 'cart'), failed('a2', null, 'cart')])).route).toBe(
      'normal',
    );
  });

  it('given failures that were not focused checks, then no escalation', () => {
    expect(decideNextRoute(given([failed('a1', 'a', null), failed('a2', 'b', null)])).route).toBe('normal');
  });

  it('given no escalation route is configured, then the normal route until the budget runs out', () => {
    const attempts = [failed('a1', 'a', 'cart'), failed('a2', 'b', 'cart')];
    expect(decideNextRoute(given(attempts, { escalationConfigured: false })).route).toBe('normal');
    expect(decideNextRoute(given(attempts, { escalationConfigured: false, maxAttempts: 2 })).route).toBe(
      'none',
    );
  });
});
