import { readFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { SetupStep, TargetRepository } from './repository.schema';

/**
 * The environment a repository's setup steps and checks run with, wherever they run (the worker's
 * checks, the evidence service's checkout of the same revision, `caseloop repo check`): built from
 * an allowlist, never a copy of the service's own environment, which holds its credentials.
 */

/**
 * The host's certificate settings: an install behind a TLS-intercepting proxy or a private
 * registry with its own CA needs them (npm and corepack run on Node and read NODE_EXTRA_CA_CERTS;
 * git, curl and others read the rest). Paths, never secrets.
 */
const TRUST = [
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'CURL_CA_BUNDLE',
  'GIT_SSL_CAINFO',
  'npm_config_cafile',
  'NPM_CONFIG_CAFILE',
  'PIP_CERT',
] as const;

/** Where the host reaches the network and its package registry: addresses, passed only without credentials in them. */
const NETWORK = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'npm_config_registry',
  'NPM_CONFIG_REGISTRY',
  'npm_config_proxy',
  'npm_config_https_proxy',
  'npm_config_noproxy',
  'COREPACK_NPM_REGISTRY',
  'YARN_NPM_REGISTRY_SERVER',
  // How this host's registry is trusted by corepack (e.g. "0" where it serves no signing keys).
  'COREPACK_INTEGRITY_KEYS',
  // Python's and Go's package indexes: pip's user config (~/.config/pip/pip.conf) is not read under
  // the throwaway HOME, so a host's mirror reaches pip and uv only through these.
  'PIP_INDEX_URL',
  'PIP_EXTRA_INDEX_URL',
  'PIP_FIND_LINKS',
  'PIP_TRUSTED_HOST',
  'UV_INDEX_URL',
  'UV_EXTRA_INDEX_URL',
  'UV_DEFAULT_INDEX',
  'UV_INDEX',
  'GOPROXY',
  'GONOSUMDB',
  'GOPRIVATE',
] as const;

/** Every variable `hostNetworkEnvironment` may pass on. */
export const HOST_NETWORK_VARIABLES: readonly string[] = [...TRUST, ...NETWORK];

/**
 * `user:password@` in a URL: such a value is a credential and stays with the host. Anywhere in the
 * value: pip's and Go's settings hold several URLs (`PIP_EXTRA_INDEX_URL="https://a https://u:p@b"`).
 */
const USERINFO = /(?:^|[\s,|])[a-z][a-z0-9+.-]*:\/\/[^/@\s,|]*@/i;

/**
 * The host's CA, proxy and registry settings that an install needs to reach its registry from
 * here. A proxy or registry URL carrying credentials is left out (a private registry's token goes
 * in the repository's `secretFiles`).
 */
export function hostNetworkEnvironment(
  inherited: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of HOST_NETWORK_VARIABLES) {
    const v = inherited[k];
    if (v && !USERINFO.test(v)) out[k] = v;
  }
  return out;
}

/**
 * Where package managers keep what they download, shared by every case of one service so the
 * second install of the same lockfile comes from disk. HOME stays a throwaway per run (an agent's
 * code runs in checks); the caches are named explicitly instead. npm's cache (cacache) and pnpm's
 * store are safe under concurrent use; a case's checks can write into the cache, which is the
 * price of not downloading everything for every case (docs/target-repositories.md).
 */
export function packageCacheEnvironment(cacheDir: string): Record<string, string> {
  return {
    npm_config_cache: join(cacheDir, 'npm'),
    // pnpm's store and yarn berry's global folder live under the XDG directories.
    XDG_CACHE_HOME: join(cacheDir, 'xdg-cache'),
    XDG_DATA_HOME: join(cacheDir, 'xdg-data'),
    YARN_CACHE_FOLDER: join(cacheDir, 'yarn'),
    // pnpm and yarn through corepack: the package manager itself is downloaded once, never prompted for.
    COREPACK_HOME: join(cacheDir, 'corepack'),
    COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
  };
}

/** A secret file that cannot be read: the run cannot start, and the message names the variable, never a value. */
export class SecretFileError extends Error {
  constructor(
    readonly variable: string,
    readonly code: string,
  ) {
    super(`the secret file for ${variable} cannot be read (${code})`);
    this.name = 'SecretFileError';
  }
}

/**
 * The repository's `secretFiles`, read now (a rotated file is picked up at the next run): the
 * first line of each file, by variable name.
 */
export async function readRepositorySecrets(repo: TargetRepository): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [name, file] of Object.entries(repo.secretFiles ?? {})) {
    try {
      out[name] = ((await readFile(file, 'utf8')).split('\n')[0] ?? '').trim();
    } catch (e) {
      throw new SecretFileError(name, (e as NodeJS.ErrnoException).code ?? 'error');
    }
  }
  return out;
}

/** Replaces each exact secret value (longest first) before any other redaction sees the text. */
export function redactValues(text: string, values: readonly string[]): string {
  let out = text;
  for (const v of [...new Set(values)].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length))
    out = out.split(v).join('[redacted:known_secret]');
  return out;
}

/** `cwd` of a step, inside the worktree (the schema already refused `..` and absolute paths). */
export function stepDirectory(worktree: string, cwd: string | undefined): string {
  const root = resolve(worktree);
  const dir = cwd ? resolve(root, cwd) : root;
  if (dir !== root && !dir.startsWith(`${root}${sep}`)) throw new Error(`${cwd} is outside the worktree`);
  return dir;
}

/** Taken from the host as they are: where programs are, and how text and time are shown. */
const INHERITED = ['PATH', 'LANG', 'LC_ALL', 'TZ'] as const;

export interface StepEnvironmentInput {
  /** The service's own environment: only INHERITED and `hostNetworkEnvironment` are taken from it. */
  inherited: Readonly<Record<string, string | undefined>>;
  /** A throwaway HOME and TMPDIR for this run. */
  home: string;
  tmp: string;
  /** The shared package cache (`packageCacheEnvironment`); none when unset. */
  cacheDir?: string;
  repo: Pick<TargetRepository, 'env'>;
  step: Pick<SetupStep, 'env'>;
  /** `readRepositorySecrets`: only for this run, never logged. */
  secrets: Readonly<Record<string, string>>;
}

/**
 * The whole environment of one setup step or check: the host's PATH and locale, its CA, proxy and
 * registry settings, the shared package cache, the repository's `env`, the step's `env`, CI=true,
 * the repository's secrets, and a HOME and TMPDIR of its own. Git is kept from prompting or
 * reading the host's system config.
 */
export function stepEnvironment(input: StepEnvironmentInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const v = input.inherited[name];
    if (v !== undefined) env[name] = v;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  Object.assign(
    env,
    hostNetworkEnvironment(input.inherited),
    input.cacheDir ? packageCacheEnvironment(input.cacheDir) : {},
    input.repo.env ?? {},
    input.step.env ?? {},
    { CI: 'true' },
    input.secrets,
  );
  env.HOME = input.home;
  env.TMPDIR = input.tmp;
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_CONFIG_NOSYSTEM = '1';
  return env;
}
