import { RecordedEvent } from '@caseloop/contracts';
import { BaseRpcContext } from '@nestjs/microservices';
import { Delivery } from './delivery';

/** What a handler may know about the delivery: `@Ctx() ctx: JetStreamContext`. */
export class JetStreamContext extends BaseRpcContext<[Delivery, RecordedEvent, string]> {
  get message(): Delivery {
    return this.args[0];
  }
  get event(): RecordedEvent {
    return this.args[1];
  }
  /** The durable consumer delivering this event. */
  get consumer(): string {
    return this.args[2];
  }
  get seq(): number {
    return this.message.seq;
  }
  get subject(): string {
    return this.message.subject;
  }
  /** 1 on the first delivery. */
  get deliveryCount(): number {
    return this.message.deliveryCount;
  }
  /** Handled again on an operator's request after it was dead-lettered. */
  get redrive(): boolean {
    return this.message.redrive;
  }
  get redelivered(): boolean {
    return this.message.redelivered;
  }
  /** Resets the ack timer: call it from long handlers so the server does not redeliver meanwhile. */
  working(): void {
    this.message.working();
  }
}
