import { RecordedEvent } from '@caseloop/contracts';
import { EventStore } from '@caseloop/ledger';
import { IdentityReadModel } from '../identity/identity.read-model';
import { CaseCommand, CaseRefusalCode, SourceFacts } from './case.commands';
import { CaseContextSource, ContextMemo, CoordinatorLog } from './case.context';
import { decide } from './decision/case.decider';
import { DecisionState, foldRecord } from './decision/case-record.evolve';

export interface CaseRun {
  /** The decider's refusal, if it refused. */
  refusal: CaseRefusalCode | null;
  /** The case as the decision saw it; null when the command had already been handled. */
  state: DecisionState | null;
}

/**
 * load → fold once → decide → append on `case.<id>.coordinator`, under optimistic concurrency:
 * one load per attempt, and a conflict starts over from a fresh load. What was appended is
 * applied to the read model at once, so the next report sees it.
 */
export class CaseRunner {
  constructor(
    private readonly store: EventStore,
    private readonly model: IdentityReadModel,
    private readonly context: CaseContextSource,
    private readonly log: CoordinatorLog,
    private readonly now: () => Date,
  ) {}

  async run(
    caseId: string,
    commandId: string,
    cause: RecordedEvent | null,
    command: CaseCommand,
    extra: readonly SourceFacts[] = [],
  ): Promise<CaseRun> {
    const out: CaseRun = { refusal: null, state: null };
    // The classifier and the readiness route are asked once per command, not once per attempt,
    // unless the sources changed.
    let memo: ContextMemo | null = null;
    const result = await this.store.handle({
      aggregate: 'case',
      aggregateId: caseId,
      producer: 'coordinator',
      commandId: commandId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 128),
      causationId: cause?.eventId ?? null,
      correlationId: cause?.correlationId ?? caseId,
      occurredAt: this.now().toISOString(),
      decide: async (events) => {
        const state = foldRecord(events);
        const built = await this.context.build(caseId, state, command, extra, memo);
        memo = built.memo;
        const d = decide(command, state, built.ctx);
        out.state = state;
        out.refusal = d.ok ? null : d.code;
        if (!d.ok) this.log.info({ caseId, command: command.kind, code: d.code }, d.message);
        return d.ok ? d.events : [];
      },
    });
    for (const ev of result.appended) this.model.apply(ev);
    return out;
  }

  /** The case folded, for a command that was handled before (a redelivery) and still needs its state. */
  async load(caseId: string): Promise<DecisionState> {
    return foldRecord((await this.store.load('case', caseId)).events);
  }
}
