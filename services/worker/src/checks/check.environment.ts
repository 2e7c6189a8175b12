import { readFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { TargetRepository } from '@caseloop/target-repositories';

/**
 * Where package managers keep what they download, shared by every case on this worker so the
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

/**
 * The host's certificate settings: an install behind a TLS-intercepting proxy or a private
 * registry with its own CA needs them (npm reads its `cafile`; corepack and anything else on
 * Node's fetch read NODE_EXTRA_CA_CERTS). Paths, never secrets; proxies go in the repository's env.
 */
const TRUST = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'] as const;

export function hostTrustEnvironment(
  inherited: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of TRUST) {
    const v = inherited[k];
    if (v) out[k] = v;
  }
  return out;
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
