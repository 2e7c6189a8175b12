import { createHash } from 'node:crypto';
import { EventStore } from '@caseloop/ledger';
import { LeaseFact } from './lease.decider';

/**
 * Appends lease facts to the cases they concern (`<ns>.case.<caseId>.lease`). The decision was
 * already made by compare-and-set on the lease bucket, so an append carries no expected sequence:
 * it records an outcome, it does not decide one. Its command id is derived from the fact (bucket
 * incarnation + token + kind), so a retried append is deduplicated and `ensure` can check the case.
 */
export class LeaseRecorder {
  /** Command ids this process appended lately: the same fact offered again (see requestedFact) skips the round trip. */
  private readonly recent = new Set<string>();

  constructor(
    private readonly store: EventStore,
    private readonly epoch: number,
  ) {}

  commandIdOf(fact: LeaseFact): string {
    const id = `lease-${this.epoch.toString(36)}-${fact.key}`;
    return id.length <= 128 ? id : `lease-${createHash('sha256').update(id).digest('hex').slice(0, 48)}`;
  }

  async record(facts: readonly LeaseFact[], now: number): Promise<void> {
    for (const f of facts) {
      const commandId = this.commandIdOf(f);
      if (this.recent.has(commandId)) continue;
      await this.store.append({
        aggregate: 'case',
        aggregateId: f.caseId,
        producer: 'lease',
        events: [f.event],
        commandId,
        causationId: null,
        correlationId: f.correlationId,
        occurredAt: new Date(now).toISOString(),
      });
      this.remember(commandId);
    }
  }

  private remember(commandId: string): void {
    this.recent.add(commandId);
    // Insertion-ordered: drop the oldest. Forgetting only costs a deduplicated append.
    if (this.recent.size > 10_000) this.recent.delete(this.recent.values().next().value as string);
  }

  /** Appends a fact unless the case already holds it (by command id): for reconciling after a crash. */
  async ensure(facts: readonly LeaseFact[], now: number): Promise<number> {
    let appended = 0;
    for (const f of facts) {
      const res = await this.store.handle({
        aggregate: 'case',
        aggregateId: f.caseId,
        producer: 'lease',
        commandId: this.commandIdOf(f),
        causationId: null,
        correlationId: f.correlationId,
        occurredAt: new Date(now).toISOString(),
        consistency: 'producer',
        decide: () => [f.event],
      });
      appended += res.alreadyHandled ? 0 : res.appended.length;
    }
    return appended;
  }
}
