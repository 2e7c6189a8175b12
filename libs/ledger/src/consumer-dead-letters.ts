import { z } from 'zod';
import { JetStreamClient, JetStreamManager, NatsConnection } from 'nats';
import { directGet } from './direct-get';
import { deadLetterStreamName, deadLetterSubject } from './provision';

/**
 * A dead letter names the ledger message by stream sequence; the message itself stays in the
 * ledger untouched. Two sources feed the dead-letter stream: our own records (written by the
 * consumer that gave up, with its reason) and the server's advisories (MAX_DELIVERIES when a
 * crashed or hung handler ran out of deliveries, MSG_TERMINATED for every `term()`).
 */
export const deadLetterRecordSchema = z.object({
  kind: z.literal('caseloop.dead_letter.v1'),
  stream: z.string(),
  streamSeq: z.number().int().positive(),
  subject: z.string(),
  consumer: z.string(),
  producer: z.string(),
  reason: z.string().max(2000),
  code: z.string(),
  deliveryCount: z.number().int().nonnegative(),
  eventType: z.string().nullable(),
  recordedAt: z.iso.datetime({ offset: true }),
});
export type DeadLetterRecord = z.infer<typeof deadLetterRecordSchema>;

export interface DeadLetter {
  /** Sequence in the dead-letter stream. */
  dlqSeq: number;
  source: 'record' | 'max_deliveries' | 'terminated';
  stream: string;
  streamSeq: number;
  consumer: string;
  reason: string | null;
  code: string | null;
}

const advisorySchema = z.object({
  type: z.string(),
  stream: z.string(),
  consumer: z.string(),
  stream_seq: z.number().int(),
  reason: z.string().optional(),
});

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class DeadLetterWriter {
  constructor(
    private readonly js: JetStreamClient,
    private readonly namespace: string,
  ) {}

  /** Idempotent per (stream, consumer, sequence): a retried record is deduplicated by the server. */
  async record(r: Omit<DeadLetterRecord, 'kind'>): Promise<void> {
    const rec: DeadLetterRecord = { kind: 'caseloop.dead_letter.v1', ...r, reason: r.reason.slice(0, 2000) };
    await this.js.publish(
      deadLetterSubject(this.namespace, r.producer, r.consumer),
      encoder.encode(JSON.stringify(rec)),
      {
        msgID: `dlq:${r.stream}:${r.consumer}:${r.streamSeq}`,
      },
    );
  }
}

export function parseDeadLetter(subject: string, body: Uint8Array, dlqSeq: number): DeadLetter | null {
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(body));
  } catch {
    return null;
  }
  if (subject.startsWith('$JS.EVENT.ADVISORY.')) {
    const a = advisorySchema.safeParse(raw);
    if (!a.success) return null;
    const source = subject.includes('.MAX_DELIVERIES.') ? 'max_deliveries' : 'terminated';
    return {
      dlqSeq,
      source,
      stream: a.data.stream,
      streamSeq: a.data.stream_seq,
      consumer: a.data.consumer,
      reason: a.data.reason ?? null,
      code: null,
    };
  }
  const r = deadLetterRecordSchema.safeParse(raw);
  if (!r.success) return null;
  return {
    dlqSeq,
    source: 'record',
    stream: r.data.stream,
    streamSeq: r.data.streamSeq,
    consumer: r.data.consumer,
    reason: r.data.reason,
    code: r.data.code,
  };
}

/**
 * Dead letters of a ledger stream, oldest first, read with direct get (no consumer needed).
 * `fromSeq` (a dead-letter stream sequence) lets a poller read only what is new since its last look.
 */
export async function listConsumerDeadLetters(
  jsm: JetStreamManager,
  stream: string,
  opts: { fromSeq?: number } = {},
): Promise<DeadLetter[]> {
  const name = deadLetterStreamName(stream);
  const out: DeadLetter[] = [];
  const info = await jsm.streams.info(name);
  for (
    let seq = Math.max(info.state.first_seq, opts.fromSeq ?? 1);
    seq > 0 && seq <= info.state.last_seq;
    seq++
  ) {
    let m;
    try {
      m = await directGet(jsm, name, { seq, next_by_subj: '>' });
    } catch {
      break;
    }
    const dl = parseDeadLetter(m.subject, m.data, m.seq);
    if (dl) out.push(dl);
    seq = m.seq;
  }
  return out;
}

export interface RedriveResult {
  seq: number;
  outcome: 'acked' | 'skipped' | 'failed' | 'dead_lettered';
}

/**
 * Asks the service whose consumer dead-lettered `seq` to handle it again (after its cause was
 * fixed). Resolves with how it settled; throws when no such service answers or it refuses.
 */
export async function redriveConsumerDeadLetter(
  nc: NatsConnection,
  o: { namespace: string; consumer: string; seq: number; timeoutMs?: number },
): Promise<RedriveResult> {
  const reply = await nc.request(
    `${o.namespace}_redrive.${o.consumer}`,
    encoder.encode(JSON.stringify({ seq: o.seq })),
    {
      timeout: o.timeoutMs ?? 30_000,
    },
  );
  const body = JSON.parse(decoder.decode(reply.data)) as Partial<RedriveResult> & { error?: string };
  if (body.error || !body.outcome)
    throw new Error(`redrive of seq ${o.seq} on ${o.consumer}: ${body.error ?? 'no outcome'}`);
  return { seq: o.seq, outcome: body.outcome };
}
