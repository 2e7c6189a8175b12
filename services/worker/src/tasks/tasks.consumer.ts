import { RecordedEvent } from '@caseloop/contracts';
import { JetStreamContext, TransientError } from '@caseloop/ledger';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { TaskProcessor } from './task.processor';

/** How often a long attempt tells JetStream the delivery is still being worked on. */
const HEARTBEAT_MS = 5_000;

/**
 * Translates the coordinator's task events and the case's terminal events into one call: drive
 * this case to its next idle point. What to do is decided from the ledger, not from the event,
 * so every one of these handlers is the same and a redelivery is harmless.
 */
@Controller()
export class TasksConsumer {
  constructor(@Inject(TaskProcessor) private readonly processor: TaskProcessor) {}

  @EventPattern('TaskAssigned')
  onTaskAssigned(@Payload() e: RecordedEvent, @Ctx() ctx: JetStreamContext): Promise<void> {
    return this.drive(e, ctx);
  }

  @EventPattern('TaskResumed')
  onTaskResumed(@Payload() e: RecordedEvent, @Ctx() ctx: JetStreamContext): Promise<void> {
    return this.drive(e, ctx);
  }

  @EventPattern('TaskCancelled')
  onTaskCancelled(@Payload() e: RecordedEvent, @Ctx() ctx: JetStreamContext): Promise<void> {
    return this.drive(e, ctx);
  }

  /** A receipt is about to be judged: the worker confirms the target branch has not moved under its proof. */
  @EventPattern('ReceiptBuilt')
  onReceiptBuilt(@Payload() e: RecordedEvent, @Ctx() ctx: JetStreamContext): Promise<void> {
    return this.drive(e, ctx);
  }

  @EventPattern('CaseApproved')
  onCaseApproved(@Payload() e: RecordedEvent, @Ctx() ctx: JetStreamContext): Promise<void> {
    return this.drive(e, ctx);
  }

  @EventPattern('CaseRejected')
  onCaseRejected(@Payload() e: RecordedEvent, @Ctx() ctx: JetStreamContext): Promise<void> {
    return this.drive(e, ctx);
  }

  @EventPattern('CaseMarkedDuplicate')
  onCaseMarkedDuplicate(@Payload() e: RecordedEvent, @Ctx() ctx: JetStreamContext): Promise<void> {
    return this.drive(e, ctx);
  }

  private async drive(e: RecordedEvent, ctx: JetStreamContext): Promise<void> {
    if (e.aggregate !== 'case') return;
    const heartbeat = setInterval(() => ctx.working(), HEARTBEAT_MS);
    try {
      await this.processor.process(e.aggregateId, { eventId: e.eventId, correlationId: e.correlationId });
    } catch (err) {
      // Business outcomes are already events (blockers); what reaches here is infrastructure
      // (NATS, disk, git itself) and may heal: retry with back-off.
      throw err instanceof Error && err.name === 'ContractError'
        ? err
        : new TransientError((err as Error).message, { cause: err });
    } finally {
      clearInterval(heartbeat);
    }
  }
}
