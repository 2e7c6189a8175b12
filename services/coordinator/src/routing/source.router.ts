import { draft, RecordedEvent } from '@caseloop/contracts';
import {
  decideWithJudge,
  EmbeddingsPort,
  IdentityDecision,
  Judgement,
  ModelAdapter,
} from '@caseloop/identity';
import { EventStore } from '@caseloop/ledger';
import { CaseContextSource, CoordinatorLog, factsFrom } from '../cases/case.context';
import { SourceFacts } from '../cases/case.commands';
import { CaseRunner } from '../cases/case.runner';
import { IdentityReadModel, reportTime } from '../identity/identity.read-model';
import {
  commandForRoute,
  decideRoute,
  lastRouted,
  rerouteRefused,
  Routed,
  routeDifferent,
} from './route.decider';

const NO_MATCH: IdentityDecision = {
  decision: 'new',
  matchedWith: null,
  confidence: 0,
  reasons: [],
  alternatives: [],
};

/**
 * Points inside routing where a test may stop it, exactly as a crash would: whatever the hook
 * throws ends the handler there, with nothing after it written.
 */
export interface RoutingHooks {
  /** The routing is recorded on the source; nothing is on the case yet. */
  routeRecorded?(routed: Routed): void | Promise<void>;
  /** A judgement route answered (or fell back) about a review-band match: for the metric. */
  judged?(j: Judgement): void;
}

/**
 * Routing in two writes that cannot half-happen: SourceRouted on the source's coordinator
 * subject is the decision (once per source, under optimistic concurrency, so racing routers
 * agree), and the case command is derived from it. Whoever finds a routing whose case does not
 * show it yet — the router itself, a redelivery, the consumer seeing SourceRouted, the start,
 * the clock — runs that derived command, which is idempotent.
 */
export class SourceRouter {
  constructor(
    private readonly store: EventStore,
    private readonly model: IdentityReadModel,
    private readonly context: CaseContextSource,
    private readonly runner: CaseRunner,
    private readonly embeddings: EmbeddingsPort | null,
    private readonly log: CoordinatorLog,
    private readonly now: () => Date,
    private readonly hooks: RoutingHooks = {},
    /** The pinned judgement route for the review band, or null (offline only). */
    private readonly judge: ModelAdapter | null = null,
  ) {}

  async route(e: RecordedEvent<'SourceReceived'>, vector: number[] | null): Promise<void> {
    const facts = this.model.factsOf(e.data.sourceId) ?? factsFrom(e);
    let skipped = false;
    const threadCase = facts.place.threadId ? this.model.caseOfThread(facts.place.threadId) : null;
    const { match, judgement } = threadCase
      ? { match: NO_MATCH, judgement: null }
      : await this.match(facts, vector);
    const routed = await this.record(facts.sourceId, `route-${facts.sourceId}`, e, (events) => {
      if (lastRouted(events)) return null;
      skipped = this.model.caseOfSource(facts.sourceId) !== null;
      if (skipped) return null;
      return decideRoute({ facts, threadCase, match, judgement });
    });
    if (skipped)
      return this.log.info({ sourceId: facts.sourceId }, 'source already belongs to a case; skipped');
    if (!routed) return;
    if (routed.fresh) await this.hooks.routeRecorded?.(routed.data);
    await this.apply(routed.data, facts, routed.event);
  }

  /**
   * The offline decision; when a judgement route is configured, the route is asked "same root
   * cause?" about the offline head whenever its best case clears the ask floor (`decideWithJudge`,
   * the same policy `caseloop identity replay` measures), with sanitized briefs only. A timeout, a
   * failing endpoint or an unusable answer leaves the offline decision, and the record says so.
   */
  private async match(
    facts: SourceFacts,
    vector: number[] | null,
  ): Promise<{ match: IdentityDecision; judgement: Judgement | null }> {
    const query = {
      text: this.model.sanitized(facts.text),
      embedding: vector,
      at: reportTime(facts.createdAt),
    };
    if (!this.judge || this.model.caseOfSource(facts.sourceId) !== null)
      return { match: this.model.index.decide(query), judgement: null };
    const judged = await decideWithJudge(this.model.index, query, this.judge, {
      briefOf: (caseId) => this.model.index.brief(caseId),
    });
    const judgement = judged.judgement;
    if (judgement) {
      this.hooks.judged?.(judgement);
      if (judgement.fallback)
        this.log.warn(
          { sourceId: facts.sourceId, route: judgement.route, reason: judgement.fallback.reason },
          'judgement route did not answer usably; the offline decision stands',
        );
    }
    return { match: judged.decision, judgement };
  }

  /** Puts a routed source on its case if it is not there yet. */
  async finish(sourceId: string): Promise<void> {
    if (!this.model.routeUnfinished(sourceId)) return;
    const routed = lastRouted((await this.store.load('source', sourceId)).events);
    const facts = await this.context.facts(sourceId);
    if (!routed || !facts) return;
    this.log.info(
      { sourceId, caseId: routed.data.caseId },
      'finishing a routing that did not reach its case',
    );
    await this.apply(routed.data, facts, routed);
  }

  /** A held report a reviewer called a different problem opens its own case. */
  async openForDifferent(
    e: RecordedEvent<'LinkReviewSettled'>,
    held: { sourceId: string; confidence: number },
  ) {
    const facts = await this.context.facts(held.sourceId);
    if (!facts) return;
    const data = routeDifferent(facts, held.confidence, e);
    const routed = await this.record(facts.sourceId, `settle-${e.data.reviewId}`, e, () => data);
    if (routed?.data.outcome === 'opened') await this.apply(routed.data, facts, e);
  }

  async embed(text: string): Promise<number[] | null> {
    if (!this.embeddings || text.trim() === '') return null;
    try {
      const [v] = await this.embeddings.embed([this.model.sanitized(text)]);
      return v ?? null;
    } catch (e) {
      // The embeddings signal is optional: matching goes on with text and signatures.
      const code = (e as { code?: string }).code ?? 'error';
      this.log.warn({ code }, 'embeddings unavailable for this report');
      return null;
    }
  }

  /** The derived write: the case command the routing amounts to; a refusal reroutes to a case of its own. */
  private async apply(routed: Routed, facts: SourceFacts, cause: RecordedEvent): Promise<void> {
    const command = commandForRoute(routed, facts);
    const { refusal } = await this.runner.run(
      routed.caseId,
      `${routed.outcome}-${facts.sourceId}`,
      cause,
      command,
      [facts],
    );
    if (!refusal || routed.outcome === 'opened') return;
    const reopened = await this.record(facts.sourceId, `reroute-${facts.sourceId}`, cause, () =>
      rerouteRefused(routed, facts, refusal),
    );
    if (reopened) await this.apply(reopened.data, facts, cause);
  }

  /**
   * Records a routing once per command (a first routing only when the source has none); whoever
   * wins a race, everyone continues with what was recorded. `decide` returns null to record nothing.
   */
  private async record(
    sourceId: string,
    commandId: string,
    cause: RecordedEvent,
    decide: (events: readonly RecordedEvent[]) => Routed | null,
  ): Promise<{ data: Routed; event: RecordedEvent; fresh: boolean } | null> {
    let existing: RecordedEvent<'SourceRouted'> | null = null;
    const res = await this.store.handle({
      aggregate: 'source',
      aggregateId: sourceId,
      producer: 'coordinator',
      commandId,
      causationId: cause.eventId,
      correlationId: cause.correlationId,
      occurredAt: this.now().toISOString(),
      decide: (events) => {
        existing = lastRouted(events);
        const data = decide(events);
        return data ? [draft('SourceRouted', data)] : [];
      },
    });
    const mine = res.alreadyHandled ? null : lastRouted(res.appended);
    // A command handled before (a redelivery) continues with the source's latest routing.
    const recorded = res.alreadyHandled
      ? lastRouted((await this.store.load('source', sourceId)).events)
      : (mine ?? existing);
    if (!recorded) return null;
    this.model.apply(recorded);
    return { data: recorded.data, event: recorded, fresh: mine !== null };
  }
}
