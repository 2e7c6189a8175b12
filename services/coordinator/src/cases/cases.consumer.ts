import { RecordedEvent } from '@caseloop/contracts';
import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { CaseHandler } from './case.handler';

/** Translates ledger deliveries into the case handler; nothing else. */
@Controller()
export class CasesConsumer {
  constructor(@Inject(CaseHandler) private readonly cases: CaseHandler) {}

  // New reports (SourceReceived) come through the routing consumer (routing.consumer.ts), one at a time.

  // Facts from other producers the case decider reacts to.
  @EventPattern('LinkReviewSettled')
  onLinkReviewSettled(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('CaseMadeActionable')
  onCaseMadeActionable(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('ChecksCompleted')
  onChecksCompleted(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('TargetRevisionChecked')
  onTargetRevisionChecked(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('ReceiptBuilt')
  onReceiptBuilt(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('DeliveryConfirmed')
  onDeliveryConfirmed(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('DeliveryRefused')
  onDeliveryRefused(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('BlockerRaised')
  onBlockerRaised(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('ReviewerDecided')
  onReviewerDecided(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  // The identity read model follows the coordinator's own decisions (also those of other replicas).
  @EventPattern('SourceRouted')
  onSourceRouted(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('CaseOpened')
  onCaseOpened(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('SourceLinked')
  onSourceLinked(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('LinkReviewRequested')
  onLinkReviewRequested(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('CaseApproved')
  onCaseApproved(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('CaseRejected')
  onCaseRejected(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }

  @EventPattern('CaseMarkedDuplicate')
  onCaseMarkedDuplicate(@Payload() e: RecordedEvent): Promise<void> {
    return this.cases.onCaseEvent(e);
  }
}
