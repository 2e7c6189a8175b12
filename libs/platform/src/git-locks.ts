import { realpath, stat, unlink } from 'node:fs/promises';
import { dirname, isAbsolute, resolve, sep } from 'node:path';

/**
 * Lock files git leaves behind when it dies holding them (a SIGKILLed service, a git killed at its
 * timeout): git never removes them itself, and every later command on that repository fails with
 * "Unable to create '…/index.lock': File exists" until someone does. A lock under one of `roots`
 * (a service's own mirrors and checkouts, where every git is that service's) untouched for
 * `staleMs` is taken as left by a dead git and removed; a younger one is a live git's.
 */
export interface StaleGitLockPolicy {
  roots: readonly string[];
  staleMs: number;
  onRemoved?: (lockPath: string, ageMs: number) => void;
}

/** How many stale locks one command may clear in turn (a dead git may leave index and HEAD locks). */
export const MAX_STALE_GIT_LOCKS = 4;

const HELD_LOCK = /Unable to create '([^'\n]+\.lock)': File exists/;

/** The lock file git says it could not take, resolved against the command's directory. */
export function heldGitLock(stderr: string, cwd: string): string | undefined {
  const m = HELD_LOCK.exec(stderr);
  return m?.[1] === undefined ? undefined : resolve(cwd, m[1]);
}

/**
 * `cleared`: the lock was stale and is gone (or was released meanwhile): run the command again;
 * `held`: a live git holds it: retry later; `foreign`: not under the policy's roots, left alone.
 */
export async function clearStaleGitLock(
  lockPath: string,
  policy: StaleGitLockPolicy | undefined,
  now: () => number = Date.now,
): Promise<'cleared' | 'held' | 'foreign'> {
  if (!policy || !isAbsolute(lockPath)) return 'foreign';
  const dir = await realpath(dirname(lockPath)).catch(() => null);
  if (dir === null) return 'foreign';
  let inside = false;
  for (const root of policy.roots) {
    const r = await realpath(root).catch(() => null);
    if (r !== null && (dir === r || dir.startsWith(r + sep))) inside = true;
  }
  if (!inside) return 'foreign';
  const st = await stat(lockPath).catch(() => null);
  if (st === null) return 'cleared';
  const ageMs = now() - st.mtimeMs;
  if (ageMs < policy.staleMs) return 'held';
  await unlink(lockPath).catch(() => undefined);
  policy.onRemoved?.(lockPath, ageMs);
  return 'cleared';
}
