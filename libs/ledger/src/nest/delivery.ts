import { JsMsg, StoredMsg } from 'nats';

/** One delivery of a ledger message to this service: from its durable consumer, or a re-drive. */
export interface Delivery {
  readonly seq: number;
  readonly subject: string;
  readonly data: Uint8Array;
  /** 1 on the first delivery. */
  readonly deliveryCount: number;
  readonly redelivered: boolean;
  readonly redrive: boolean;
  ack(): void;
  /** Settles an event this service has no handler for. */
  skip(): void;
  nak(delayMs: number): void;
  term(reason: string): void;
  working(): void;
}

export function consumerDelivery(m: JsMsg, termWithReason: boolean): Delivery {
  return {
    seq: m.seq,
    subject: m.subject,
    data: m.data,
    deliveryCount: m.info.redeliveryCount,
    redelivered: m.redelivered,
    redrive: false,
    ack: () => m.ack(),
    skip: () => m.ack(),
    nak: (delayMs) => m.nak(delayMs),
    // 2.9 does not parse `+TERM <reason>` and would redeliver; a plain term works everywhere.
    term: (reason) => (termWithReason ? m.term(reason.slice(0, 200)) : m.term()),
    working: () => m.working(),
  };
}

export type RedriveOutcome = 'acked' | 'skipped' | 'failed' | 'dead_lettered';

/**
 * A dead letter handled again on an operator's request: read by sequence, settled once. A failure
 * is reported back instead of being retried, so a re-drive never loops.
 */
export function redriveDelivery(m: StoredMsg, settled: (outcome: RedriveOutcome) => void): Delivery {
  return {
    seq: m.seq,
    subject: m.subject,
    data: m.data,
    deliveryCount: 1,
    redelivered: true,
    redrive: true,
    ack: () => settled('acked'),
    skip: () => settled('skipped'),
    nak: () => settled('failed'),
    term: () => settled('dead_lettered'),
    working: () => undefined,
  };
}
