import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { withFileLock } from '@caseloop/platform';

/**
 * Serializes async work per key: two cases of one repository must not fetch into one mirror at
 * once. With `lockFile`, also across processes: two worker replicas sharing a directory (one volume)
 * take a lock file per key, or a fetch of one meets the other's half-made worktree.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly lockFile?: (key: string) => string) {}

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const locked = this.lockFile
      ? async () => {
          const path = (this.lockFile as (key: string) => string)(key);
          await mkdir(dirname(path), { recursive: true });
          return withFileLock(path, work);
        }
      : work;
    const current = previous.catch(() => undefined).then(locked);
    this.tails.set(key, current);
    try {
      return await current;
    } finally {
      if (this.tails.get(key) === current) this.tails.delete(key);
    }
  }
}
