import { RecordedEvent } from '@caseloop/contracts';
import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { IntakeRuntime } from './intake.runtime';

/** Translates ledger events into intake's runtime; nothing else. */
@Controller()
export class IntakeConsumer {
  constructor(@Inject(IntakeRuntime) private readonly intake: IntakeRuntime) {}

  @EventPattern('DeliveryRequested')
  onDeliveryRequested(@Payload() e: RecordedEvent<'DeliveryRequested'>): Promise<void> {
    return this.intake.onDeliveryRequested(e);
  }

  @EventPattern('ClockTicked')
  async onClockTicked(@Payload() e: RecordedEvent<'ClockTicked'>): Promise<void> {
    await this.intake.onClockTicked(e);
  }

  // The live status: every case event that moves it (STATUS_EVENTS in status/status.updater.ts).

  @EventPattern('TaskAssigned')
  onTaskAssigned(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('TaskResumed')
  onTaskResumed(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('TaskCancelled')
  onTaskCancelled(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('AttemptStarted')
  onAttemptStarted(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('CheckStarted')
  onCheckStarted(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('CheckFinished')
  onCheckFinished(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('AttemptFinished')
  onAttemptFinished(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('ChecksCompleted')
  onChecksCompleted(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('ClientValidationStarted')
  onClientValidationStarted(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('ClientValidationCompleted')
  onClientValidationCompleted(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('ArtifactStored')
  onArtifactStored(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('ReceiptBuilt')
  onReceiptBuilt(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('CaseAwaitingReview')
  onCaseAwaitingReview(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('CaseApproved')
  onCaseApproved(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }

  @EventPattern('CaseRejected')
  onCaseRejected(@Payload() e: RecordedEvent): Promise<void> {
    return this.intake.onCaseProgress(e);
  }
}
