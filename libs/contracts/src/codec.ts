import { EventType, eventDefinition } from './catalogue';
import { envelopeProblem, EventMeta, HEADERS, LedgerEvent, MAX_EVENT_BYTES, RecordedEvent } from './envelope';
import { ContractError } from './errors';
import { assertSafeId } from './ids';
import { parseSubject, subjectFor } from './subjects';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export interface EncodedEvent {
  subject: string;
  msgId: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

/**
 * Validates an event against its definition and the subject it will be written to.
 * Refuses what a reader would refuse, so nothing unreadable is ever appended.
 */
export function encodeEvent(namespace: string, event: LedgerEvent): EncodedEvent {
  const def = eventDefinition(event.type);
  if (!def) throw new ContractError('unknown_event_type', `no such event type ${event.type}`);
  if (def.producer !== event.producer) {
    throw new ContractError(
      'producer_not_owner',
      `${event.type} belongs to ${def.producer}, not ${event.producer}`,
    );
  }
  if (def.aggregate !== event.aggregate) {
    throw new ContractError(
      'invalid_envelope',
      `${event.type} lives on a ${def.aggregate}, not a ${event.aggregate}`,
    );
  }
  if (event.version !== def.version) {
    throw new ContractError(
      'unknown_event_version',
      `${event.type} is written at v${def.version}, not v${event.version}`,
    );
  }
  assertSafeId('aggregateId', event.aggregateId);
  const problem = envelopeProblem(event);
  if (problem) throw new ContractError('invalid_envelope', problem);
  const data = def.schema.safeParse(event.data);
  if (!data.success) {
    throw new ContractError(
      'invalid_payload',
      `${event.type}: ${data.error.issues.map(fmtIssue).join('; ')}`,
    );
  }
  // The envelope's fields in a fixed order, with the payload as its schema parsed it.
  const body = encoder.encode(
    JSON.stringify({
      eventId: event.eventId,
      type: event.type,
      version: event.version,
      aggregate: event.aggregate,
      aggregateId: event.aggregateId,
      producer: event.producer,
      commandId: event.commandId,
      causationId: event.causationId,
      correlationId: event.correlationId,
      occurredAt: event.occurredAt,
      data: data.data,
    }),
  );
  if (body.byteLength > MAX_EVENT_BYTES) {
    throw new ContractError(
      'oversized_event',
      `${event.type} is ${body.byteLength} bytes; the limit is ${MAX_EVENT_BYTES}`,
    );
  }
  return {
    subject: subjectFor(namespace, event.aggregate, event.aggregateId, event.producer),
    msgId: event.eventId,
    headers: {
      [HEADERS.msgId]: event.eventId,
      [HEADERS.type]: event.type,
      [HEADERS.version]: String(event.version),
      [HEADERS.producer]: event.producer,
    },
    body,
  };
}

/**
 * Reads one stored message: parses, checks the envelope against the subject (case id,
 * producer, and that this producer owns this event type), upcasts old versions, validates.
 * Throws ContractError naming what is wrong; callers dead-letter with the stream sequence.
 */
export function decodeEvent(subject: string, body: Uint8Array, seq: number): RecordedEvent {
  if (body.byteLength > MAX_EVENT_BYTES * 4) {
    throw new ContractError('oversized_event', `message at seq ${seq} is ${body.byteLength} bytes`, { seq });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(body));
  } catch (e) {
    throw new ContractError('malformed_json', `message at seq ${seq} is not JSON: ${(e as Error).message}`, {
      seq,
    });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ContractError('invalid_envelope', `seq ${seq}: the body is not a JSON object`, { seq });
  }
  // `envelopeProblem` holds the rules of `envelopeSchema` (a test keeps them in agreement) without
  // building a copy of every envelope read: a rebuild decodes the whole stream.
  const e = raw as EventMeta & { type: string; data: unknown };
  const problem = envelopeProblem(e);
  if (problem) throw new ContractError('invalid_envelope', `seq ${seq}: ${problem}`, { seq });
  const parts = parseSubject(subject);
  if (parts.aggregate !== e.aggregate || parts.id !== e.aggregateId || parts.producer !== e.producer) {
    throw new ContractError(
      'subject_mismatch',
      `seq ${seq}: envelope says ${e.aggregate}/${e.aggregateId}/${e.producer} but subject is ${subject}`,
      { seq },
    );
  }
  const def = eventDefinition(e.type);
  if (!def)
    throw new ContractError('unknown_event_type', `seq ${seq}: unknown event type ${e.type}`, { seq });
  if (def.producer !== e.producer || def.aggregate !== e.aggregate) {
    throw new ContractError('producer_not_owner', `seq ${seq}: ${e.producer} may not write ${e.type}`, {
      seq,
    });
  }
  if (e.version > def.version) {
    throw new ContractError(
      'unknown_event_version',
      `seq ${seq}: ${e.type} v${e.version} is newer than this reader (v${def.version}); upgrade the reader`,
      { seq },
    );
  }
  let data = e.data;
  for (let v = e.version; v < def.version; v++) data = (def.upcasters[v] as (d: unknown) => unknown)(data);
  const parsed = def.schema.safeParse(data);
  if (!parsed.success) {
    throw new ContractError(
      'invalid_payload',
      `seq ${seq}: ${e.type}: ${parsed.error.issues.map(fmtIssue).join('; ')}`,
      {
        seq,
      },
    );
  }
  // Only the envelope's own fields are kept, in a fixed order (unknown keys in a body are dropped).
  return {
    eventId: e.eventId,
    type: e.type as EventType,
    version: def.version,
    aggregate: e.aggregate,
    aggregateId: e.aggregateId,
    producer: e.producer,
    commandId: e.commandId,
    causationId: e.causationId,
    correlationId: e.correlationId,
    occurredAt: e.occurredAt,
    data: parsed.data,
    seq,
    subject,
  } as RecordedEvent;
}

function fmtIssue(i: { path: PropertyKey[]; message: string }): string {
  return `${i.path.map(String).join('.') || '(root)'}: ${i.message}`;
}
