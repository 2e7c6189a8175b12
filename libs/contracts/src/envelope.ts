import { z } from 'zod';
import { EventData, EventType } from './catalogue';
import { Aggregate, AGGREGATES, Producer, PRODUCERS } from './producers';

/**
 * The envelope travels in the body, complete: it is the source of truth, and readers check it
 * against the subject on every read. Type, version and producer are repeated in NATS headers for
 * routing and inspection without parsing the body (see HEADERS).
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
const ISO_DATETIME = z.regexes.datetime({ offset: true });
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

/**
 * The rules of `envelopeSchema` without building zod's copy of the object, for writers that check
 * every envelope they append (a test keeps the two in agreement). Returns the first problem, or null.
 */
export function envelopeProblem(e: EventMeta & { type: string }): string | null {
  if (!isSafe(e.eventId)) return 'eventId: not a safe id';
  if (typeof e.type !== 'string' || e.type.length < 1 || e.type.length > 100)
    return 'type: 1 to 100 characters';
  if (!Number.isSafeInteger(e.version) || e.version < 1) return 'version: a positive integer';
  if (!(AGGREGATES as readonly unknown[]).includes(e.aggregate))
    return `aggregate: one of ${AGGREGATES.join(', ')}`;
  if (typeof e.aggregateId !== 'string' || e.aggregateId.length < 1 || e.aggregateId.length > 128) {
    return 'aggregateId: 1 to 128 characters';
  }
  if (!(PRODUCERS as readonly unknown[]).includes(e.producer))
    return `producer: one of ${PRODUCERS.join(', ')}`;
  if (!isSafe(e.commandId)) return 'commandId: not a safe id';
  if (e.causationId !== null && !isSafe(e.causationId)) return 'causationId: null or a safe id';
  if (!isSafe(e.correlationId)) return 'correlationId: not a safe id';
  if (typeof e.occurredAt !== 'string' || !ISO_DATETIME.test(e.occurredAt))
    return 'occurredAt: an ISO datetime with offset';
  return null;
}

const isSafe = (v: unknown): boolean => typeof v === 'string' && SAFE.test(v);

/**
 * Headers every appended message carries. The envelope's other fields (case, command, causation,
 * correlation, time) are in the body only: readers take them from there.
 */
export const HEADERS = {
  msgId: 'Nats-Msg-Id',
  expectedLastSubjectSeq: 'Nats-Expected-Last-Subject-Sequence',
  type: 'Caseloop-Event-Type',
  version: 'Caseloop-Event-Version',
  producer: 'Caseloop-Producer',
} as const;

/** Larger events are refused before they reach the stream (the stream's max_msg_size is set above it). */
export const MAX_EVENT_BYTES = 64 * 1024;
