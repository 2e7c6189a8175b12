import { EventDraft } from '@caseloop/contracts';
import type { EventStore } from '@caseloop/ledger';
import { ChecksRunner } from '../../checks/checks.runner';
import { BranchPublisher } from '../../pr-ready/branch.publisher';
import { DraftPullRequests } from '../../pr-ready/draft-pull-requests';
import { RepositoryRegistry } from '../../repositories/repository.registry';
import { RoutesFile } from '../../runtimes/route.config';
import { RuntimeLauncher } from '../../runtimes/runtime.launcher';
import { WorktreeManager } from '../../worktrees/worktree.manager';
import { RoutingPolicy } from '../task.decider';

export interface TaskLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface TaskProcessorDeps {
  store: Pick<EventStore, 'load' | 'append'>;
  repositories: RepositoryRegistry;
  worktrees: WorktreeManager;
  launcher: RuntimeLauncher;
  checks: ChecksRunner;
  publisher: BranchPublisher;
  draftPullRequests: DraftPullRequests | null;
  routes: RoutesFile;
  redact: (text: string) => string;
  now: () => Date;
  logger: TaskLogger;
  /** Told about every batch of events the worker appended. */
  metrics?: { record(events: readonly EventDraft[]): void };
}

export interface Cause {
  eventId: string;
  correlationId: string;
}

/** Records events in the middle of a step; answers the worker's sequence after them. */
export type AppendNow = (events: EventDraft[], tag: string) => Promise<number>;

/** The worker is shutting down; the step is redone after the restart. */
export class WorkerStopping extends Error {
  constructor() {
    super('the worker is stopping; the step runs again after the restart');
    this.name = 'WorkerStopping';
  }
}

/** Whether the worker still records outcomes; every step asks before it records or goes on. */
export class RunState {
  private stopping = false;

  /** From now on nothing is recorded: outcomes of processes killed by the shutdown are not outcomes. */
  stop(): void {
    this.stopping = true;
  }

  assertRunning(): void {
    if (this.stopping) throw new WorkerStopping();
  }
}

/** The routes' limits, measured now: what `nextStep` and `watchesTarget` decide by. */
export function routingPolicy(deps: Pick<TaskProcessorDeps, 'routes' | 'now'>): RoutingPolicy {
  return {
    maxAttempts: deps.routes.maxAttempts,
    escalationConfigured: deps.routes.escalation !== null,
    budget: deps.routes.budget ?? {},
    now: deps.now().getTime(),
  };
}
