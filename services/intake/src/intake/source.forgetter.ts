import { draft, EventData, RecordedEvent, safeId } from '@caseloop/contracts';
import { EventStore, SourceKeys } from '@caseloop/ledger';
import { JSONCodec, NatsConnection, Subscription } from 'nats';
import { z } from 'zod';
import { IntakeLog } from '../ops/intake.metrics';
import { IntakeIndex } from './intake-index';
import { IntakeLedgerWriter } from './ledger-writer';

export type ForgetReason = EventData<'SourceForgotten'>['reason'];

/** What a forget request came to; `not_recorded` covers a dropped message and one intake never saw. */
export type ForgetOutcome = 'forgotten' | 'already_forgotten' | 'not_recorded';

/**
 * Forgets a source's raw text: `SourceForgotten` first (the decision, deduplicated by its command
 * id), then the key is erased. A stop between the two is finished at the next start, from the
 * index (`finishInterrupted`). The redacted copy stays in the stream; nothing is deleted there.
 */
export class SourceForgetter {
  constructor(
    private readonly store: EventStore,
    private readonly writer: IntakeLedgerWriter,
    private readonly keys: SourceKeys,
    private readonly index: IntakeIndex,
    private readonly log: IntakeLog,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async forget(sourceId: string, reason: ForgetReason): Promise<ForgetOutcome> {
    const { events } = await this.store.load('source', sourceId);
    const received = events.find((e): e is RecordedEvent<'SourceReceived'> => e.type === 'SourceReceived');
    if (!received) return 'not_recorded';
    const earlier = events.some((e) => e.type === 'SourceForgotten');
    if (!earlier) {
      const r = await this.writer.append({
        aggregate: 'source',
        aggregateId: sourceId,
        commandId: `forget-${sourceId}`,
        causationId: received.eventId,
        correlationId: sourceId,
        occurredAt: this.now().toISOString(),
        event: draft('SourceForgotten', {
          sourceId,
          keyId: received.data.sealed?.keyId ?? null,
          reason,
        }),
      });
      if (r.status === 'appended') this.index.apply(r.event);
    }
    this.index.forgotten.add(sourceId);
    const key = await this.keys.forget(sourceId);
    this.log.info({ sourceId, reason, key }, 'source raw text forgotten');
    return earlier ? 'already_forgotten' : 'forgotten';
  }

  /** At start: every source the ledger says is forgotten has its key erased (idempotent). */
  async finishInterrupted(): Promise<number> {
    let erased = 0;
    for (const sourceId of this.index.forgotten)
      if ((await this.keys.forget(sourceId)) === 'erased') erased++;
    return erased;
  }
}

const deletePayload = z.object({
  id: z.string().regex(/^\d{1,25}$/),
  channel_id: z.string(),
  guild_id: z.string().optional(),
});
const bulkDeletePayload = z.object({
  ids: z.array(z.string().regex(/^\d{1,25}$/)).max(100),
  channel_id: z.string(),
  guild_id: z.string().optional(),
});

/** The ids of the messages a MESSAGE_DELETE (or _BULK) dispatch removed in `guildId`; [] for anything else. */
export function deletedMessageIds(payload: unknown, bulk: boolean, guildId: string): string[] {
  const parsed = bulk ? bulkDeletePayload.safeParse(payload) : deletePayload.safeParse(payload);
  if (!parsed.success || parsed.data.guild_id !== guildId) return [];
  return 'ids' in parsed.data ? parsed.data.ids : [parsed.data.id];
}

/** Operators ask intake to forget a source here (`caseloop forget`): body `{"sourceId":"…"}`. */
export const forgetSubject = (namespace: string): string => `${namespace}_forget.intake`;

export interface ForgetReply {
  sourceId?: string;
  outcome?: ForgetOutcome;
  error?: string;
}

/** Answers forget requests on `forgetSubject`; the caller unsubscribes on stop. */
export function listenForForgetRequests(
  nc: NatsConnection,
  namespace: string,
  forgetter: SourceForgetter,
  log: IntakeLog,
): Subscription {
  const codec = JSONCodec<ForgetReply>();
  return nc.subscribe(forgetSubject(namespace), {
    callback: (err, msg) => {
      if (err) return;
      const reply = (body: ForgetReply) => msg.respond(codec.encode(body));
      let sourceId: string;
      try {
        sourceId = z.object({ sourceId: safeId }).parse(JSON.parse(msg.string())).sourceId;
      } catch {
        reply({ error: 'bad forget request: expected {"sourceId": "<source id>"}' });
        return;
      }
      forgetter.forget(sourceId, 'operator').then(
        (outcome) => reply({ sourceId, outcome }),
        (e: unknown) => {
          log.error({ sourceId, err: (e as Error).message }, 'forget request failed');
          reply({ sourceId, error: (e as Error).message });
        },
      );
    },
  });
}
