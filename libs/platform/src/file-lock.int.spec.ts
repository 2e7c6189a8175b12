import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { withFileLock } from './file-lock';

/** The lock two replicas sharing a directory take around a git mirror. */
describe('withFileLock', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'caseloop-lock-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lets one holder in at a time and removes its file after', async () => {
    const lock = join(dir, 'repo.lock');
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    // Separate calls, no shared queue: as two processes would call it.
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        withFileLock(
          lock,
          async () => {
            inside++;
            most = Math.max(most, inside);
            await new Promise((r) => setTimeout(r, 20));
            order.push(i);
            inside--;
          },
          { pollMs: 5 },
        ),
      ),
    );
    expect(most).toBe(1);
    expect(order).toHaveLength(8);
    await expect(stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('is released when the work throws', async () => {
    const lock = join(dir, 'repo.lock');
    await expect(
      withFileLock(lock, async () => {
        throw new Error('git failed');
      }),
    ).rejects.toThrow('git failed');
    await expect(stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('waits for a live process of this host, takes over from a dead one at once', async () => {
    const lock = join(dir, 'repo.lock');
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      await writeFile(lock, `${hostname()} ${child.pid}\n`);
      const waited = withFileLock(lock, async () => 'mine', { pollMs: 10 });
      const early = await Promise.race([waited, new Promise((r) => setTimeout(() => r('waiting'), 300))]);
      expect(early).toBe('waiting');
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      await expect(waited).resolves.toBe('mine');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it("takes over another host's lock only once it is stale", async () => {
    const lock = join(dir, 'repo.lock');
    await writeFile(lock, 'another-host 1\n');
    const early = await Promise.race([
      withFileLock(lock, async () => 'fresh lock taken', { pollMs: 10, staleMs: 5_000 }),
      new Promise((r) => setTimeout(() => r('waiting'), 300)),
    ]);
    expect(early).toBe('waiting');
    const old = new Date(Date.now() - 10_000);
    await utimes(lock, old, old);
    await expect(withFileLock(lock, async () => readFile(lock, 'utf8'), { staleMs: 5_000 })).resolves.toBe(
      `${hostname()} ${process.pid}\n`,
    );
  });
});
