/**
 * A runtime gets a minimal environment built from an allowlist, never a copy of the worker's:
 * the worker holds git credentials and ledger credentials, and an agent prompted by a report must
 * not be able to read them (`env`, `/proc/self/environ`, or a `*_FILE` path pointing at a secret).
 */
const INHERITED = ['PATH', 'LANG', 'LC_ALL', 'TZ'] as const;

/** Names that look like a secret or a path to one are refused in configured runtime variables. */
export const SECRET_LOOKING =
  /(TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE|API_?KEY|_KEY$|_FILE$|^AWS_|^NATS_|^GIT_|^CASELOOP_|^DISCORD)/i;

export interface RuntimeEnvironmentInput {
  /** Where PATH, LANG, LC_ALL, TZ are taken from (the worker's environment). */
  inherited: Readonly<Record<string, string | undefined>>;
  home: string;
  tmp: string;
  /** Configured, non-secret variables (validated against SECRET_LOOKING at start). */
  extra: Readonly<Record<string, string>>;
  /** The runtime provider's own credential (e.g. its API key), read from a file for this runtime only. */
  providerCredentials: Readonly<Record<string, string>>;
}

export function runtimeEnvironment(input: RuntimeEnvironmentInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const v = input.inherited[name];
    if (v !== undefined) env[name] = v;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  Object.assign(env, input.extra, input.providerCredentials);
  env.HOME = input.home;
  env.TMPDIR = input.tmp;
  // An agent must not reach a credential helper or a terminal prompt through git.
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_CONFIG_NOSYSTEM = '1';
  return env;
}
