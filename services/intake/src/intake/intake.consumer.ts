import { RecordedEvent } from '@caseloop/contracts';
import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { IntakeRuntime } from './intake.runtime';

/** Translates ledger deliveries into intake's runtime; nothing else. */
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
}
