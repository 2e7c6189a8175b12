import { TaskLogger, TaskProcessor, WatchOutcome, WorkerStopping } from './task.processor';

/**
 * Wakes every interval and has the processor look at the target branch of every case awaiting
 * review (`TaskProcessor.watchTargets`). One look at a time: a slow fetch delays the next one
 * instead of overlapping it. 0 turns the watch off.
 */
export class TargetHeadWatch {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly processor: Pick<TaskProcessor, 'watchTargets'>,
    private readonly intervalMs: number,
    private readonly log: TaskLogger,
  ) {}

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.tick()
        .then(() => undefined)
        .catch((e: unknown) => {
          if (!(e instanceof WorkerStopping))
            this.log.warn({ err: (e as Error).message }, 'target head watch failed');
        })
        .finally(() => (this.running = null));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One look; the cases whose head moved are logged by the processor as it reports them. */
  tick(): Promise<Record<string, WatchOutcome>> {
    return this.processor.watchTargets();
  }
}
