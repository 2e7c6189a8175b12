/**
 * Runs tasks one at a time per key (an aggregate) and at most `concurrency` at a time overall,
 * with at most `capacity` accepted and unfinished. `admit()` waits for room: the consume loop
 * stops pulling while the service is saturated instead of buffering without bound.
 */
export class KeyedScheduler {
  private readonly tails = new Map<string, Promise<void>>();
  private running = 0;
  private accepted = 0;
  private readonly runWaiters: (() => void)[] = [];
  private readonly admitWaiters: (() => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly capacity: number,
  ) {
    if (concurrency < 1 || capacity < concurrency) throw new RangeError('need 1 <= concurrency <= capacity');
  }

  get size(): number {
    return this.accepted;
  }

  async admit(): Promise<void> {
    while (this.accepted >= this.capacity) await new Promise<void>((r) => this.admitWaiters.push(r));
  }

  /** Queues `task` behind earlier tasks of the same key. */
  schedule(key: string, task: () => Promise<void>): void {
    this.accepted++;
    const prev = this.tails.get(key) ?? Promise.resolve();
    const run = prev.then(async () => {
      await this.acquire();
      try {
        await task();
      } catch {
        // Tasks settle their own errors; one failure must not stall the key.
      } finally {
        this.release();
      }
    });
    const tail = run.finally(() => {
      this.accepted--;
      if (this.tails.get(key) === tail) this.tails.delete(key);
      this.admitWaiters.shift()?.();
      if (this.accepted === 0) this.idleWaiters.splice(0).forEach((r) => r());
    });
    this.tails.set(key, tail);
  }

  /** Resolves when every accepted task has finished. */
  idle(): Promise<void> {
    if (this.accepted === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private async acquire(): Promise<void> {
    while (this.running >= this.concurrency) await new Promise<void>((r) => this.runWaiters.push(r));
    this.running++;
  }

  private release(): void {
    this.running--;
    this.runWaiters.shift()?.();
  }
}
