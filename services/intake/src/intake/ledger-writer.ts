import { Aggregate, EventDraft, RecordedEvent, subjectFor } from '@caseloop/contracts';
import { EventStore, isConcurrencyError } from '@caseloop/ledger';

export interface IntakeAppend {
  aggregate: Aggregate;
  aggregateId: string;
  commandId: string;
  causationId: string | null;
  correlationId: string;
  occurredAt: string;
  event: EventDraft;
  /** 0: the subject must be empty; a number: its last sequence; undefined: no check (facts deduplicated by command id). */
  expectedSeq?: number;
}

export type AppendOutcome = { status: 'appended'; event: RecordedEvent } | { status: 'already_recorded' };

/**
 * intake's one way into the ledger. A conflict on an expectation or a deduplicated command id both
 * mean "this fact is already there": for exact source identity that is the expected outcome, not an error.
 */
export class IntakeLedgerWriter {
  constructor(private readonly store: EventStore) {}

  get namespace(): string {
    return this.store.namespace;
  }

  async append(a: IntakeAppend): Promise<AppendOutcome> {
    const meta = {
      aggregate: a.aggregate,
      aggregateId: a.aggregateId,
      producer: 'intake' as const,
      commandId: a.commandId,
      causationId: a.causationId,
      correlationId: a.correlationId,
      occurredAt: a.occurredAt,
    };
    try {
      const res = await this.store.append({
        ...meta,
        events: [a.event],
        ...(a.expectedSeq !== undefined ? { expectedSeq: a.expectedSeq } : {}),
      });
      if (res.duplicate) return { status: 'already_recorded' };
      const [built] = this.store.build({ ...meta, events: [a.event] });
      const subject = subjectFor(this.store.namespace, a.aggregate, a.aggregateId, 'intake');
      return {
        status: 'appended',
        event: { ...built, seq: res.seqs[0] as number, subject } as RecordedEvent,
      };
    } catch (e) {
      if (isConcurrencyError(e)) return { status: 'already_recorded' };
      throw e;
    }
  }
}
