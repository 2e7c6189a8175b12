import { createHash } from 'node:crypto';
import { DiscordPlace, draft } from '@caseloop/contracts';
import { IntakeIndex } from '../intake/intake-index';
import { IntakeLedgerWriter } from '../intake/ledger-writer';
import { IntakeLog, IntakeMetrics } from '../ops/intake.metrics';
import { ChunkProgress } from './delivery.decider';
import { DeliverySpec } from './delivery.request';
import { chunkNonce, sha256Hex } from './nonce';

export type RefusalReason =
  | 'too_long'
  | 'discord_error'
  | 'ambiguous_outside_window'
  | 'channel_gone'
  | 'previous_chunk_unconfirmed'
  | 'message_deleted'
  | 'thread_locked';

export type IntendedChunk = Extract<ChunkProgress, { status: 'intended' }>;

/** Command ids are unique stream-wide (case, chunk, delivery) and fit the 128-character safe-id rule. */
const cmdId = (prefix: string, ...parts: (string | number)[]): string => {
  const plain = `${prefix}-${parts.join('-')}`;
  return plain.length <= 120
    ? plain
    : `${prefix}-${createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 40)}`;
};

/**
 * The bookkeeping of every post: each chunk's intent before its POST and its outcome after
 * (confirmed or refused), and a drop notice once sent, appended under deterministic command ids,
 * applied to the intake index and to the delivery's progress as they are recorded.
 */
export class DeliveryJournal {
  constructor(
    private readonly writer: IntakeLedgerWriter,
    private readonly index: IntakeIndex,
    private readonly log: IntakeLog,
    private readonly metrics: IntakeMetrics,
    private readonly now: () => Date,
  ) {}

  /** `DeliveryIntended` for chunk `i`, journaled before its POST; answers what was intended. */
  async intend(
    spec: DeliverySpec,
    chunks: string[],
    i: number,
    threadId: string,
    progress: Map<number, ChunkProgress>,
  ): Promise<IntendedChunk> {
    const content = chunks[i] as string;
    const intent = draft('DeliveryIntended', {
      deliveryId: spec.deliveryId,
      chunkIndex: i,
      sourceId: spec.sourceId,
      chunkCount: chunks.length,
      nonce: chunkNonce(spec.caseId, spec.deliveryId, i),
      channelId: spec.place.channelId,
      threadId,
      contentSha256: sha256Hex(content),
      length: content.length,
      intendedAt: this.now().toISOString(),
    });
    const journaled = await this.writer.append(
      this.#meta(spec, cmdId('intend', spec.caseId, i, spec.deliveryId), intent),
    );
    if (journaled.status === 'appended') this.index.apply(journaled.event);
    const intended: IntendedChunk = {
      status: 'intended',
      nonce: intent.data.nonce,
      channelId: intent.data.channelId,
      threadId,
      contentSha256: intent.data.contentSha256,
      intendedAt: intent.data.intendedAt,
    };
    progress.set(i, intended);
    return intended;
  }

  async confirm(
    spec: DeliverySpec,
    i: number,
    discordMessageId: string,
    threadId: string | null,
    reconciled: boolean,
    progress: Map<number, ChunkProgress>,
  ): Promise<void> {
    const ev = draft('DeliveryConfirmed', {
      deliveryId: spec.deliveryId,
      chunkIndex: i,
      sourceId: spec.sourceId,
      discordMessageId,
      channelId: spec.place.channelId,
      threadId,
      reconciled,
    });
    const r = await this.writer.append(
      this.#meta(spec, cmdId('confirm', spec.caseId, i, spec.deliveryId), ev),
    );
    if (r.status === 'appended') this.index.apply(r.event);
    progress.set(i, { status: 'confirmed', discordMessageId, threadId });
    this.metrics.delivered.inc();
  }

  async refuse(
    spec: DeliverySpec,
    count: number,
    i: number,
    reason: RefusalReason,
    detail: string,
    progress: Map<number, ChunkProgress>,
  ): Promise<void> {
    const ev = draft('DeliveryRefused', {
      deliveryId: spec.deliveryId,
      chunkIndex: i,
      sourceId: spec.sourceId,
      reason,
      detail: detail.slice(0, 500),
    });
    const r = await this.writer.append(
      this.#meta(spec, cmdId('refuse', spec.caseId, i, spec.deliveryId), ev),
    );
    if (r.status === 'appended') this.index.apply(r.event);
    progress.set(i, { status: 'refused', reason });
    this.metrics.refused.inc({ kind: 'delivery' });
    this.log.warn(
      { caseId: spec.caseId, deliveryId: spec.deliveryId, chunk: i, chunks: count, reason },
      'delivery chunk refused',
    );
  }

  /** `DropNoticeSent` on the dropped message's source; a notice already recorded is no longer pending. */
  async noticeSent(
    sourceId: string,
    place: DiscordPlace,
    reason: 'oversized' | 'daily_ceiling',
    discordMessageId: string,
  ): Promise<void> {
    const r = await this.writer.append({
      aggregate: 'source',
      aggregateId: sourceId,
      commandId: cmdId('notice', place.messageId),
      causationId: null,
      correlationId: sourceId,
      occurredAt: this.now().toISOString(),
      event: draft('DropNoticeSent', { sourceId, reason, discordMessageId }),
      ...(this.index.sourceSeq.has(sourceId)
        ? { expectedSeq: this.index.sourceSeq.get(sourceId) as number }
        : {}),
    });
    if (r.status === 'appended') this.index.apply(r.event);
    else this.index.pendingNotices.delete(sourceId);
  }

  #meta(spec: DeliverySpec, commandId: string, event: ReturnType<typeof draft>) {
    return {
      aggregate: 'case' as const,
      aggregateId: spec.caseId,
      commandId,
      causationId: spec.causationId,
      correlationId: spec.correlationId,
      occurredAt: this.now().toISOString(),
      event,
    };
  }
}
