import { z } from 'zod';
import { EventData, EventType } from './catalogue';
import { Aggregate, AGGREGATES, Producer, PRODUCERS } from './producers';

/**
 * The envelope travels in the body (the source of truth) and, for routing and inspection
 * without parsing, in NATS headers. Readers check it against the subject on every read.
 */
export interface EventMeta {
  /** Unique stream-wide and deterministic (`<commandId>:<index>`): it is also the `Nats-Msg-Id`. */
  eventId: string;
  version: number;
  aggregate: Aggregate;
  aggregateId: string;
  producer: Producer;
  /** The command (or triggering event) that produced this event. */
  commandId: string;
  /** The event that caused the command, if any. */
  causationId: string | null;
  /** The whole chain back to the first report. */
  correlationId: string;
  occurredAt: string;
}

export type LedgerEvent<T extends EventType = EventType> = T extends EventType
  ? EventMeta & { type: T; data: EventData<T> }
  : never;

/** An event as read back: with its stream sequence and subject. */
export type RecordedEvent<T extends EventType = EventType> = T extends EventType
  ? LedgerEvent<T> & { seq: number; subject: string }
  : never;

const SAFE = /^[A-Za-z0-9][A-Za-z0-9_:.-]{0,255}$/;
export const envelopeSchema = z.object({
  eventId: z.string().regex(SAFE),
  type: z.string().min(1).max(100),
  version: z.number().int().positive(),
  aggregate: z.enum(AGGREGATES),
  aggregateId: z.string().min(1).max(128),
  producer: z.enum(PRODUCERS),
  commandId: z.string().regex(SAFE),
  causationId: z.string().regex(SAFE).nullable(),
  correlationId: z.string().regex(SAFE),
  occurredAt: z.iso.datetime({ offset: true }),
  data: z.unknown(),
});

export const HEADERS = {
  msgId: 'Nats-Msg-Id',
  expectedLastSubjectSeq: 'Nats-Expected-Last-Subject-Sequence',
  type: 'Caseloop-Event-Type',
  version: 'Caseloop-Event-Version',
  producer: 'Caseloop-Producer',
  correlationId: 'Caseloop-Correlation-Id',
  causationId: 'Caseloop-Causation-Id',
} as const;

/** Larger events are refused before they reach the stream (the stream's max_msg_size is set above it). */
export const MAX_EVENT_BYTES = 64 * 1024;
