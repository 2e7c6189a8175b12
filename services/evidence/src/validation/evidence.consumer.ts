import { RecordedEvent } from '@caseloop/contracts';
import { JetStreamContext } from '@caseloop/ledger';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { EvidenceHandler } from './evidence.handler';

/** How often a long client phase tells JetStream it is still working on the delivery. */
const HEARTBEAT_MS = 5_000;

/** Translates a worker's passing check run, and a reviewer's privacy approval, into the evidence workflow. */
@Controller()
export class EvidenceConsumer {
  constructor(@Inject(EvidenceHandler) private readonly workflow: EvidenceHandler) {}

  @EventPattern('ChecksCompleted')
  async onChecksCompleted(@Payload() event: RecordedEvent, @Ctx() ctx: JetStreamContext): Promise<void> {
    const heartbeat = setInterval(() => ctx.working(), HEARTBEAT_MS);
    try {
      await this.workflow.onChecksCompleted(event);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** A check run that passed before its revision was pushed is proven once the push is recorded. */
  @EventPattern('BranchPushed')
  async onBranchPushed(@Payload() event: RecordedEvent, @Ctx() ctx: JetStreamContext): Promise<void> {
    const heartbeat = setInterval(() => ctx.working(), HEARTBEAT_MS);
    try {
      await this.workflow.onBranchPushed(event);
    } finally {
      clearInterval(heartbeat);
    }
  }

  @EventPattern('PrivacyApproved')
  async onPrivacyApproved(@Payload() event: RecordedEvent): Promise<void> {
    await this.workflow.onPrivacyApproved(event);
  }
}
