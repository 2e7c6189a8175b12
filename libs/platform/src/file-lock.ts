import { hostname } from 'node:os';
import { open, readFile, stat, unlink, utimes } from 'node:fs/promises';

export interface FileLockOptions {
  /** How often the holder touches the lock file, so a waiter can tell a live holder from a dead one. */
  refreshMs?: number;
  /** A lock file of another host untouched this long belongs to a holder that is gone. */
  staleMs?: number;
  /** Pause between attempts while another process holds the lock. */
  pollMs?: number;
}

/**
 * Runs `work` while holding an exclusive lock file (`open(path, 'wx')`): between processes that
 * share a directory, as two replicas of a service on one volume do. The in-process queue stays the
 * caller's job. A lock left by a process that died is taken over: at once when it was on this host
 * and its pid is gone (a SIGKILLed replica), or once the file has not been touched for `staleMs`
 * (another container on the same volume; the holder touches it every `refreshMs`).
 */
export async function withFileLock<T>(
  path: string,
  work: () => Promise<T>,
  opts: FileLockOptions = {},
): Promise<T> {
  const refreshMs = opts.refreshMs ?? 10_000;
  const staleMs = opts.staleMs ?? 60_000;
  const pollMs = opts.pollMs ?? 50;
  const me = `${hostname()} ${process.pid}`;
  for (;;) {
    try {
      const fh = await open(path, 'wx');
      try {
        await fh.writeFile(`${me}\n`);
      } finally {
        await fh.close();
      }
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (await abandoned(path, staleMs)) {
        await unlink(path).catch(() => undefined);
        continue;
      }
      await new Promise((r) => setTimeout(r, pollMs + Math.random() * pollMs));
    }
  }
  const timer = setInterval(() => {
    const now = new Date();
    void utimes(path, now, now).catch(() => undefined);
  }, refreshMs);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
    // Only our own lock: if it was taken over as stale meanwhile, the file is someone else's.
    const owner = await readFile(path, 'utf8').catch(() => '');
    if (owner.trim() === me) await unlink(path).catch(() => undefined);
  }
}

async function abandoned(path: string, staleMs: number): Promise<boolean> {
  const [owner, st] = await Promise.all([
    readFile(path, 'utf8').catch(() => null),
    stat(path).catch(() => null),
  ]);
  if (owner === null || st === null) return false; // released meanwhile: try again
  const [host, pidText] = owner.trim().split(' ');
  const pid = Number(pidText);
  if (host === hostname() && Number.isInteger(pid) && pid > 0) {
    if (pid === process.pid) return false;
    try {
      process.kill(pid, 0);
      return false;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ESRCH';
    }
  }
  // Being written right now (empty), or another host's: only age tells.
  return Date.now() - st.mtimeMs > staleMs;
}
