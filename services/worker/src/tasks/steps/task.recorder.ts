import { EventDraft } from '@caseloop/contracts';
import { TaskView } from '../task.state';
import { Cause, RunState, TaskProcessorDeps } from './step.context';

/** Appends the worker's events to a case, each batch under a command id the ledger deduplicates. */
export class TaskRecorder {
  constructor(
    private readonly deps: Pick<TaskProcessorDeps, 'store' | 'now' | 'metrics'>,
    private readonly run: RunState,
  ) {}

  async record(
    task: TaskView,
    cause: Cause,
    events: EventDraft[],
    tag: string,
    expectedSeq: number,
  ): Promise<number> {
    this.run.assertRunning();
    const res = await this.deps.store.append({
      aggregate: 'case',
      aggregateId: task.caseId,
      producer: 'worker',
      events,
      // Deterministic per (task, step, state): a retried append is deduplicated by the ledger.
      commandId: `${task.taskId.slice(0, 80)}-${tag}`,
      causationId: cause.eventId,
      correlationId: cause.correlationId,
      occurredAt: this.deps.now().toISOString(),
      expectedSeq,
    });
    if (!res.duplicate) this.deps.metrics?.record(events);
    return res.seqs.at(-1) ?? expectedSeq;
  }
}
