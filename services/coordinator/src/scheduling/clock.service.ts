import { EventStore } from '@caseloop/ledger';
import { CaseHandler, CoordinatorLog } from '../cases/case.handler';
import { IdentityReadModel } from '../identity/identity.read-model';
import { clockTicked } from './clock';

/**
 * Wakes every interval: appends `ClockTicked` on `ops.clock` (intake fetches the Discord delta on
 * it) and re-examines every open case, finishing anything an interrupted handler left behind.
 */
export class ClockService {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly cases: CaseHandler,
    private readonly model: IdentityReadModel,
    private readonly intervalMs: number,
    private readonly log: CoordinatorLog,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.tick()
        .then(() => undefined)
        .catch((e: unknown) => this.log.warn({ err: (e as Error).message }, 'clock tick failed'))
        .finally(() => (this.running = null));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One tick: record it (deduplicated per slot), then re-examine the open cases. */
  async tick(): Promise<{ tickId: string; reexamined: number }> {
    const at = this.now();
    // A clock turned off (0) still names manual ticks by the hour.
    const ev = clockTicked(at.getTime(), this.intervalMs > 0 ? this.intervalMs : 3_600_000);
    const res = await this.store.handle({
      aggregate: 'ops',
      aggregateId: 'clock',
      producer: 'coordinator',
      commandId: ev.data.tickId,
      causationId: null,
      correlationId: ev.data.tickId,
      occurredAt: at.toISOString(),
      decide: () => [ev],
    });
    const tick = res.appended[0] ?? null;
    let n = 0;
    for (const caseId of this.model.openCases()) {
      await this.cases.reexamine(caseId, ev.data.tickId, tick);
      n += 1;
    }
    return { tickId: ev.data.tickId, reexamined: n };
  }
}
