/**
 * Some failures are not the change's fault and no stronger model can fix them: missing permissions,
 * signing, fixtures, devices, a busy shared client. They become blockers for a human, never a reason
 * to try again or escalate. Pure: it reads a check's exit code and (redacted) output.
 */
export type EnvironmentBlocker = 'permissions' | 'signing' | 'fixtures' | 'device' | 'busy_client';

export interface BlockerFinding {
  kind: EnvironmentBlocker;
  /** Which rule matched, in words (never the matched output: it may quote anything). */
  reason: string;
}

const RULES: ReadonlyArray<{ kind: EnvironmentBlocker; pattern: RegExp; reason: string }> = [
  {
    kind: 'signing',
    pattern:
      /\b(code ?sign(ing)?|gpg failed to sign|no signing (identity|certificate)|provisioning profile|keystore (was )?not found)\b/i,
    reason: 'the output reports a signing problem',
  },
  {
    kind: 'device',
    pattern:
      /\b(no (connected |attached )?devices?( found| attached| connected)?\b|device (not found|offline|unauthorized)|simulator .{0,40}not (found|available))/i,
    reason: 'the output reports a missing device',
  },
  {
    kind: 'fixtures',
    pattern:
      /\b(fixtures? (file |data )?(not found|missing|unavailable)|missing fixtures?|no such fixture|seed data (is )?(missing|not found))\b/i,
    reason: 'the output reports missing fixtures',
  },
  {
    kind: 'busy_client',
    pattern: /\b(EBUSY|resource (is )?busy|lease (refused|held by)|client is busy|EADDRINUSE)\b/i,
    reason: 'the output reports a busy shared resource',
  },
  {
    kind: 'permissions',
    pattern:
      /\b(EACCES|EPERM|permission denied|operation not permitted|403 forbidden|not authori[sz]ed|authentication failed)\b/i,
    reason: 'the output reports missing permissions',
  },
];

/** sysexits(3) codes that mean "not the code's fault", plus the shell's "found but not executable". */
const EXIT_CODES: Readonly<Record<number, BlockerFinding>> = {
  75: { kind: 'busy_client', reason: 'exit code 75 (EX_TEMPFAIL)' },
  77: { kind: 'permissions', reason: 'exit code 77 (EX_NOPERM)' },
  126: { kind: 'permissions', reason: 'exit code 126 (command not executable)' },
};

export function classifyBlocker(input: { exitCode: number | null; output: string }): BlockerFinding | null {
  if (input.exitCode !== null && EXIT_CODES[input.exitCode])
    return EXIT_CODES[input.exitCode] as BlockerFinding;
  for (const rule of RULES)
    if (rule.pattern.test(input.output)) return { kind: rule.kind, reason: rule.reason };
  return null;
}
