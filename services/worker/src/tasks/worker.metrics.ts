import { EventDraft } from '@caseloop/contracts';
import { Counter, Histogram, Registry } from 'prom-client';

/** Counted from the events the worker appends, so the metrics say what the ledger says. */
export class WorkerMetrics {
  private readonly attempts: Counter<'route' | 'outcome'>;
  private readonly attemptSeconds: Histogram<'route'>;
  private readonly escalations: Counter;
  private readonly checks: Counter<'kind' | 'outcome'>;
  private readonly blockers: Counter<'kind'>;
  private readonly pushes: Counter<'created'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.attempts = new Counter({
      name: 'caseloop_worker_attempts_total',
      help: 'Finished agent attempts',
      labelNames: ['route', 'outcome'],
      registers,
    });
    this.attemptSeconds = new Histogram({
      name: 'caseloop_worker_attempt_seconds',
      help: 'Duration of agent attempts',
      labelNames: ['route'],
      buckets: [10, 30, 60, 300, 600, 1800, 3600],
      registers,
    });
    this.escalations = new Counter({
      name: 'caseloop_worker_escalations_total',
      help: 'Escalations used (at most one per case)',
      registers,
    });
    this.checks = new Counter({
      name: 'caseloop_worker_checks_total',
      help: 'Check results',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.blockers = new Counter({
      name: 'caseloop_worker_blockers_total',
      help: 'Blockers raised',
      labelNames: ['kind'],
      registers,
    });
    this.pushes = new Counter({
      name: 'caseloop_worker_pushes_total',
      help: 'PR-ready branches recorded on the remote',
      labelNames: ['created'],
      registers,
    });
  }

  record(events: readonly EventDraft[]): void {
    for (const e of events) {
      switch (e.type) {
        case 'AttemptFinished':
          this.attempts.inc({ route: e.data.route.kind, outcome: e.data.outcome });
          this.attemptSeconds.observe({ route: e.data.route.kind }, e.data.durationMs / 1000);
          break;
        case 'EscalationUsed':
          this.escalations.inc();
          break;
        case 'ChecksCompleted':
          for (const r of e.data.results) this.checks.inc({ kind: r.kind, outcome: r.outcome });
          break;
        case 'BlockerRaised':
          this.blockers.inc({ kind: e.data.kind });
          break;
        case 'BranchPushed':
          this.pushes.inc({ created: String(e.data.created) });
          break;
        default:
          break;
      }
    }
  }
}
