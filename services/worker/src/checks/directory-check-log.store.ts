import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CheckLogStore } from './s3-check-log.store';

/**
 * Check logs in a local directory, at the same keys as in the bucket: for `caseloop repo check`,
 * which runs a repository's checks on the operator's machine and points at the whole output there.
 * The services never use it (they share no disk); they store logs in S3.
 */
export class DirectoryCheckLogStore implements CheckLogStore {
  constructor(private readonly dir: string) {}

  /** Written whole under a temporary name, then renamed: a partial log is never visible. */
  async put(key: string, body: Buffer): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temp, body);
    await rename(temp, path);
  }

  pathOf(key: string): string {
    return join(this.dir, key);
  }
}
