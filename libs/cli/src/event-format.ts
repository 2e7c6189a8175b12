import type { RecordedEvent } from '@caseloop/contracts';
import { atRest, type Undecodable } from '@caseloop/projections';

const MAX_FIELDS = 6;
const MAX_VALUE = 48;

/** One event as one human line: sequence, time, aggregate, producer, type and its scalar fields. */
export function formatEvent(e: RecordedEvent): string {
  const where = `${e.aggregate} ${e.aggregateId}`;
  return `#${e.seq}  ${e.occurredAt}  ${where.padEnd(34)}  ${e.producer.padEnd(11)}  ${e.type.padEnd(22)}  ${summarize(e.data)}`.trimEnd();
}

export function formatUndecodable(u: Undecodable): string {
  return `#${u.seq}  UNDECODABLE  ${u.subject}  ${u.error}`;
}

export function summarize(data: unknown): string {
  if (typeof data !== 'object' || data === null) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    if (parts.length >= MAX_FIELDS) {
      parts.push('…');
      break;
    }
    parts.push(`${k}=${show(v)}`);
  }
  return parts.join(' ');
}

function show(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.length}]`;
  if (typeof v === 'object') return '{…}';
  if (typeof v === 'string') {
    const s = v.replace(/\s+/g, ' ');
    return JSON.stringify(s.length > MAX_VALUE ? `${s.slice(0, MAX_VALUE - 1)}…` : s);
  }
  return String(v);
}

/** The JSON-lines form: the recorded event as read (envelope, data, seq, subject); sealed raw text is left out. */
export const eventJson = (e: RecordedEvent, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ ...e, data: atRest(e), ...extra });
