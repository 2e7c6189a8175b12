import { RecordedEvent } from '@caseloop/contracts';
import { EmbeddingsPort, modelAdapter } from '@caseloop/identity';
import { EventStore } from '@caseloop/ledger';
import { CoordinatorSettings } from '../coordinator.settings';
import { IdentityReadModel } from '../identity/identity.read-model';
import { RoutingHooks, SourceRouter } from '../routing/source.router';
import { CaseClassifierPort } from '../triage/triage.rules';
import { CaseContextSource, ContextHooks, CoordinatorLog } from './case.context';
import { commandIdFrom } from './case.ids';
import { CaseRunner } from './case.runner';

export type { CoordinatorLog } from './case.context';
export type CaseHandlerHooks = RoutingHooks & ContextHooks;

/** Events of other producers the case decider reacts to. */
export const OBSERVED = [
  'LinkReviewSettled',
  'CaseMadeActionable',
  'ChecksCompleted',
  'TargetRevisionChecked',
  'ReceiptBuilt',
  'DeliveryConfirmed',
  'DeliveryRefused',
  'BlockerRaised',
  'ReviewerDecided',
] as const;

/**
 * Thin: each delivery becomes one routing or one case command (load → decide → append, in
 * `CaseRunner`). Source routing is serialized in this process so each report is compared with
 * the cases the previous reports opened; across processes, the routing is recorded once per
 * source and every id derives from the source, so racing handlers converge on one case.
 */
export class CaseHandler {
  private routing: Promise<unknown> = Promise.resolve();
  private ready: Promise<unknown> = Promise.resolve();
  private catchUp: () => Promise<unknown> = () => Promise.resolve();
  private readonly runner: CaseRunner;
  private readonly router: SourceRouter;

  constructor(
    store: EventStore,
    private readonly model: IdentityReadModel,
    settings: CoordinatorSettings,
    embeddings: EmbeddingsPort | null,
    log: CoordinatorLog,
    now: () => Date = () => new Date(),
    /** Optional: a classifier consulted before the rules; it only ever sees sanitized texts. */
    classifier: CaseClassifierPort | null = null,
    hooks: CaseHandlerHooks = {},
  ) {
    const readiness = settings.readinessJudgement ? modelAdapter(settings.readinessJudgement) : null;
    const context = new CaseContextSource(store, model, settings, log, now, classifier, readiness, hooks);
    this.runner = new CaseRunner(store, model, context, log, now);
    const judge = settings.judgement ? modelAdapter(settings.judgement) : null;
    this.router = new SourceRouter(store, model, context, this.runner, embeddings, log, now, hooks, judge);
  }

  /** Deliveries wait until the read model is rebuilt from the ledger (the transport may start first). */
  waitFor(loading: Promise<unknown>): void {
    this.ready = loading;
  }

  /** Brings the identity read model up to the stream's end before each routing (other replicas' cases). */
  catchUpWith(catchUp: () => Promise<unknown>): void {
    this.catchUp = catchUp;
  }

  /** A new Discord message: skip a known one, join its thread's case, link, hold for review, or open a case. */
  async onSourceReceived(e: RecordedEvent<'SourceReceived'>): Promise<void> {
    await this.ready;
    this.model.apply(e);
    const vector = await this.router.embed(e.data.content);
    this.model.setEmbedding(e.data.sourceId, vector);
    await this.serialized(async () => {
      await this.catchUp();
      await this.router.route(e, vector);
    });
  }

  /** A fact on a case from another producer (or the coordinator's own, for the read model). */
  async onCaseEvent(e: RecordedEvent): Promise<void> {
    await this.ready;
    this.model.apply(e);
    // A routing is the decision; putting the source on its case is derived from it, so a
    // handler that stopped between the two writes is finished by whoever sees the routing.
    if (e.type === 'SourceRouted') return this.serialized(() => this.router.finish(e.data.sourceId));
    if (e.aggregate !== 'case' || !(OBSERVED as readonly string[]).includes(e.type)) return;
    const run = await this.runner.run(e.aggregateId, commandIdFrom('obs', e.eventId), e, {
      kind: 'observe',
      event: e,
    });
    if (e.type === 'LinkReviewSettled' && e.data.verdict === 'different') {
      const settled = e as RecordedEvent<'LinkReviewSettled'>;
      const state = run.state ?? (await this.runner.load(e.aggregateId));
      const held =
        state.status === 'none' ? null : state.linkReviews.find((r) => r.reviewId === e.data.reviewId);
      if (held) await this.router.openForDifferent(settled, held);
    }
  }

  /** The clock's re-examination of one open case, after finishing any routing that did not reach it. */
  async reexamine(caseId: string, tickId: string, tick: RecordedEvent | null): Promise<void> {
    for (const sourceId of this.model.unfinishedRoutes(caseId))
      await this.serialized(() => this.router.finish(sourceId));
    await this.runner.run(caseId, `reexamine-${tickId}-${caseId}`.slice(0, 128), tick, { kind: 'reexamine' });
  }

  /** At start: every routing recorded before a stop whose case does not show it yet is finished. */
  async finishUnfinishedRoutes(): Promise<number> {
    await this.ready;
    const pending = this.model.unfinishedRoutes();
    for (const sourceId of pending) await this.serialized(() => this.router.finish(sourceId));
    return pending.length;
  }

  /** Runs after every routing queued before it, in this process. */
  private serialized(work: () => Promise<void>): Promise<void> {
    const run = this.routing.then(work);
    this.routing = run.catch(() => undefined);
    return run;
  }
}
