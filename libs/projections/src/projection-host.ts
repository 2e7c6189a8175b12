import { NatsConnection } from 'nats';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { migrateProjections } from './data-source';
import { isProjectionError } from './projection.errors';
import { Projection } from './projection';
import { ProjectionRunner } from './projection-runner';
import { PROJECTIONS } from './projections.registry';

export type RunnerState = 'starting' | 'running' | 'standby' | 'refused' | 'stopped';

export interface RunnerStatus {
  projection: string;
  state: RunnerState;
  /** Why a runner is on standby (another holds the lock) or refused (stream recreated, shape changed). */
  reason: string | null;
  checkpoint: number | null;
}

export interface ProjectionHostOptions {
  dataSource: DataSource;
  nc: NatsConnection;
  stream: string;
  projections?: readonly Projection[];
  registry?: Registry;
  log?: (entry: Record<string, unknown>) => void;
  batchSize?: number;
  /** How often a standby or refused runner tries again. */
  retryMs?: number;
}

/**
 * What a service starts to keep its projections up to date: migrations first, then one live runner
 * per projection, each following the stream until `stop()`. A replica whose runner is fenced by
 * another stays on standby and takes over when the lock frees; a refused runner (recreated stream,
 * changed shape) reports why in `status()` — for the health endpoint — and retries, never crashing
 * the service.
 */
export class ProjectionHost {
  private readonly statuses = new Map<string, RunnerStatus>();
  private readonly runners = new Map<string, ProjectionRunner>();
  private readonly loops: Promise<void>[] = [];
  private stopping = false;
  private readonly wakers = new Set<() => void>();

  private constructor(private readonly opts: ProjectionHostOptions) {}

  static async start(opts: ProjectionHostOptions): Promise<ProjectionHost> {
    await migrateProjections(opts.dataSource);
    const host = new ProjectionHost(opts);
    const firstAttempts: Promise<void>[] = [];
    for (const p of opts.projections ?? PROJECTIONS) {
      host.statuses.set(p.name, { projection: p.name, state: 'starting', reason: null, checkpoint: null });
      firstAttempts.push(new Promise<void>((settled) => host.loops.push(host.keep(p, settled))));
    }
    // Resolves once every runner is running, on standby or refused: the service knows where it stands.
    await Promise.all(firstAttempts);
    return host;
  }

  status(): RunnerStatus[] {
    return [...this.statuses.values()].map((s) => ({
      ...s,
      checkpoint: this.runners.get(s.projection)?.checkpoint ?? s.checkpoint,
    }));
  }

  /** Lag of each running projection (stream last sequence − checkpoint). */
  async lag(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const [name, r] of this.runners) out[name] = await r.lag();
    return out;
  }

  /** Finishes the batch in flight, releases the locks. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const r of this.runners.values()) r.stop();
    for (const wake of this.wakers) wake();
    await Promise.all(this.loops);
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }

  private set(p: Projection, state: RunnerState, reason: string | null = null): void {
    this.statuses.set(p.name, {
      projection: p.name,
      state,
      reason,
      checkpoint: this.runners.get(p.name)?.checkpoint ?? null,
    });
  }

  private async keep(p: Projection, settled: () => void): Promise<void> {
    const retryMs = this.opts.retryMs ?? 5_000;
    while (!this.stopping) {
      let runner: ProjectionRunner | null = null;
      try {
        runner = await ProjectionRunner.start({
          dataSource: this.opts.dataSource,
          nc: this.opts.nc,
          stream: this.opts.stream,
          projection: p,
          ...(this.opts.registry ? { registry: this.opts.registry } : {}),
          ...(this.opts.log ? { log: this.opts.log } : {}),
          ...(this.opts.batchSize ? { batchSize: this.opts.batchSize } : {}),
        });
        this.runners.set(p.name, runner);
        this.set(p, 'running');
        settled();
        if (this.stopping) runner.stop();
        await runner.follow();
      } catch (e) {
        const fenced = isProjectionError(e) && e.code === 'fenced';
        this.set(p, fenced ? 'standby' : 'refused', (e as Error).message);
        if (!fenced)
          this.opts.log?.({
            level: 'error',
            msg: 'projection runner refused',
            projection: p.name,
            error: (e as Error).message,
          });
        settled();
      } finally {
        this.runners.delete(p.name);
        if (runner) await runner.close().catch(() => undefined);
      }
      if (!this.stopping) await this.pause(retryMs);
    }
    this.set(p, 'stopped');
    settled();
  }
}
