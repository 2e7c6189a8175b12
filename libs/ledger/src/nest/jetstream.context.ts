import { RecordedEvent } from '@caseloop/contracts';
import { BaseRpcContext } from '@nestjs/microservices';
import { JsMsg } from 'nats';

/** What a handler may know about the delivery: `@Ctx() ctx: JetStreamContext`. */
export class JetStreamContext extends BaseRpcContext<[JsMsg, RecordedEvent, string]> {
  get message(): JsMsg {
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
    return this.message.info.redeliveryCount;
  }
  get redelivered(): boolean {
    return this.message.redelivered;
  }
  /** Resets the ack timer: call it from long handlers so the server does not redeliver meanwhile. */
  working(): void {
    this.message.working();
  }
}
