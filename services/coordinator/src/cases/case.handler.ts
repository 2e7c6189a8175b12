import { draft, EventData, RecordedEvent } from '@caseloop/contracts';
import { EmbeddingsPort } from '@caseloop/identity';
import { EventStore } from '@caseloop/ledger';
import { CoordinatorSettings } from '../coordinator.settings';
import { IdentityReadModel } from '../identity/identity.read-model';
import { privacyScope } from '../triage/privacy-scope';
import { CaseClassifierPort, TriageResult } from '../triage/triage.rules';
import { CaseCommand, CaseContext, CaseRefusalCode, SourceFacts } from './case.commands';
import { decideCase } from './case.decider';
import { caseIdForSource, commandIdFrom, reviewIdForSource } from './case.ids';

type Routed = EventData<'SourceRouted'>;

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
 * Points inside a handler where a test may stop it, exactly as a crash would: whatever the hook
 * throws ends the handler there, with nothing after it written.
 */
export interface CaseHandlerHooks {
  /** The routing is recorded on the source; nothing is on the case yet. */
  routeRecorded?(routed: Routed): void | Promise<void>;
}

export interface CoordinatorLog {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

/**
 * Thin handlers: load → decide → append, nothing else. Source routing is serialized in this
 * process so each report is compared with the cases the previous reports opened; across
 * processes, the routing decision is recorded once per source (OCC on the source's coordinator
 * subject) and every id is derived from the source, so racing handlers converge on one case.
 */
export class CaseHandler {
  private routing: Promise<unknown> = Promise.resolve();
  private ready: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    private readonly model: IdentityReadModel,
    private readonly settings: CoordinatorSettings,
    private readonly embeddings: EmbeddingsPort | null,
    private readonly log: CoordinatorLog,
    private readonly now: () => Date = () => new Date(),
    /** Optional: a classifier consulted before the rules; it only ever sees sanitized texts. */
    private readonly classifier: CaseClassifierPort | null = null,
    private readonly hooks: CaseHandlerHooks = {},
  ) {}

  /** Deliveries wait until the read model is rebuilt from the ledger (the transport may start first). */
  waitFor(loading: Promise<unknown>): void {
    this.ready = loading;
  }

  /** A new Discord message: skip a known one, join its thread's case, link, hold for review, or open a case. */
  async onSourceReceived(e: RecordedEvent<'SourceReceived'>): Promise<void> {
    await this.ready;
    this.model.apply(e);
    const vector = await this.embed(e.data.content);
    this.model.setEmbedding(e.data.sourceId, vector);
    await this.serialized(() => this.route(e, vector));
  }

  /** A fact on a case from another producer (or the coordinator's own, for the read model). */
  async onCaseEvent(e: RecordedEvent): Promise<void> {
    await this.ready;
    this.model.apply(e);
    // A routing is the decision; putting the source on its case is derived from it, so a
    // handler that stopped between the two writes is finished by whoever sees the routing.
    if (e.type === 'SourceRouted') return this.serialized(() => this.finishRoute(e.data.sourceId));
    if (e.aggregate !== 'case' || !(OBSERVED as readonly string[]).includes(e.type)) return;
    await this.runCase(e.aggregateId, commandIdFrom('obs', e.eventId), e, { kind: 'observe', event: e });
    if (e.type === 'LinkReviewSettled' && e.data.verdict === 'different')
      await this.openForDifferent(e as RecordedEvent<'LinkReviewSettled'>);
  }

  /** The clock's re-examination of one open case. */
  async reexamine(caseId: string, tickId: string, tick: RecordedEvent | null): Promise<void> {
    for (const sourceId of this.model.unfinishedRoutes(caseId))
      await this.serialized(() => this.finishRoute(sourceId));
    await this.runCase(caseId, `reexamine-${tickId}-${caseId}`.slice(0, 128), tick, { kind: 'reexamine' });
  }

  /** At start: every routing recorded before a stop whose case does not show it yet is finished. */
  async finishUnfinishedRoutes(): Promise<number> {
    await this.ready;
    const pending = this.model.unfinishedRoutes();
    for (const sourceId of pending) await this.serialized(() => this.finishRoute(sourceId));
    return pending.length;
  }

  /** Runs after every routing queued before it, in this process. */
  private serialized(work: () => Promise<void>): Promise<void> {
    const run = this.routing.then(work);
    this.routing = run.catch(() => undefined);
    return run;
  }

  /** Puts a routed source on its case if it is not there yet (idempotent: the ids derive from the source). */
  private async finishRoute(sourceId: string): Promise<void> {
    if (!this.model.routeUnfinished(sourceId)) return;
    const events = (await this.store.load('source', sourceId)).events;
    const cause = [...events].reverse().find((x) => x.type === 'SourceRouted');
    const routed = lastRouted(events);
    const facts = await this.facts(sourceId);
    if (!cause || !routed || !facts) return;
    this.log.info({ sourceId, caseId: routed.caseId }, 'finishing a routing that did not reach its case');
    await this.applyRoute(routed, facts, cause);
  }

  private async route(e: RecordedEvent<'SourceReceived'>, vector: number[] | null): Promise<void> {
    const sourceId = e.data.sourceId;
    const facts = this.model.factsOf(sourceId) ?? factsFrom(e);
    let routed = lastRouted((await this.store.load('source', sourceId)).events);
    if (!routed) {
      if (this.model.caseOfSource(sourceId)) {
        this.log.info({ sourceId }, 'source already belongs to a case; skipped');
        return;
      }
      routed = await this.recordRoute(sourceId, `route-${sourceId}`, e, this.decideRoute(facts, vector));
      await this.hooks.routeRecorded?.(routed);
    }
    await this.applyRoute(routed, facts, e);
  }

  private decideRoute(facts: SourceFacts, vector: number[] | null): Routed {
    const threadCase = facts.place.threadId ? this.model.caseOfThread(facts.place.threadId) : null;
    if (threadCase) {
      return {
        sourceId: facts.sourceId,
        caseId: threadCase,
        outcome: 'thread',
        confidence: 1,
        matchedWith: threadCase,
        reasons: [`a reply in the thread of case ${threadCase}`],
      };
    }
    const d = this.model.index.decide({ text: this.model.sanitized(facts.text), embedding: vector });
    const base = {
      sourceId: facts.sourceId,
      confidence: d.confidence,
      matchedWith: d.matchedWith,
      reasons: d.reasons.slice(0, 20),
    };
    if (d.decision === 'link' && d.matchedWith) return { ...base, caseId: d.matchedWith, outcome: 'linked' };
    if (d.decision === 'review' && d.matchedWith) return { ...base, caseId: d.matchedWith, outcome: 'held' };
    return { ...base, caseId: caseIdForSource(facts.sourceId, facts.createdAt), outcome: 'opened' };
  }

  /** Records the routing once; whoever wins the race, everyone continues with what was recorded. */
  private async recordRoute(
    sourceId: string,
    commandId: string,
    cause: RecordedEvent,
    data: Routed,
  ): Promise<Routed> {
    await this.store.handle({
      aggregate: 'source',
      aggregateId: sourceId,
      producer: 'coordinator',
      commandId,
      causationId: cause.eventId,
      correlationId: cause.correlationId,
      occurredAt: this.now().toISOString(),
      decide: (events) => {
        const last = lastRouted(events);
        return last && commandId.startsWith('route-') ? [] : [draft('SourceRouted', data)];
      },
    });
    const recorded = (await this.store.load('source', sourceId)).events.filter(
      (x) => x.type === 'SourceRouted',
    );
    for (const r of recorded) this.model.apply(r);
    return lastRouted(recorded) ?? data;
  }

  private async applyRoute(routed: Routed, facts: SourceFacts, cause: RecordedEvent): Promise<void> {
    const identity = { confidence: routed.confidence, reasons: routed.reasons };
    const command: CaseCommand =
      routed.outcome === 'opened'
        ? { kind: 'open_case', caseId: routed.caseId, source: facts, identity }
        : routed.outcome === 'held'
          ? { kind: 'hold_source', source: facts, reviewId: reviewIdForSource(facts.sourceId), identity }
          : {
              kind: 'link_source',
              source: facts,
              via: routed.outcome === 'thread' ? 'thread' : 'semantic_match',
              identity,
            };
    const refusal = await this.runCase(routed.caseId, `${routed.outcome}-${facts.sourceId}`, cause, command, [
      facts,
    ]);
    if (refusal && routed.outcome !== 'opened') {
      // The case closed between matching and joining: the report is never dropped, it opens its own case.
      const caseId = caseIdForSource(facts.sourceId, facts.createdAt);
      const reopened = await this.recordRoute(facts.sourceId, `reroute-${facts.sourceId}`, cause, {
        sourceId: facts.sourceId,
        caseId,
        outcome: 'opened',
        confidence: routed.confidence,
        matchedWith: routed.matchedWith,
        reasons: [...routed.reasons.slice(0, 19), `case ${routed.caseId} could not take it (${refusal})`],
      });
      await this.applyRoute(reopened, facts, cause);
    }
  }

  private async openForDifferent(e: RecordedEvent<'LinkReviewSettled'>): Promise<void> {
    const { events } = await this.store.load('case', e.aggregateId);
    const req = events.find(
      (x): x is RecordedEvent<'LinkReviewRequested'> =>
        x.type === 'LinkReviewRequested' && x.data.reviewId === e.data.reviewId,
    );
    if (!req) return;
    const facts = await this.facts(req.data.sourceId);
    if (!facts) return;
    const routed = await this.recordRoute(facts.sourceId, `settle-${e.data.reviewId}`, e, {
      sourceId: facts.sourceId,
      caseId: caseIdForSource(facts.sourceId, facts.createdAt),
      outcome: 'opened',
      confidence: req.data.confidence,
      matchedWith: e.aggregateId,
      reasons: [`a reviewer said link review ${e.data.reviewId} is a different case from ${e.aggregateId}`],
    });
    if (routed.outcome === 'opened') await this.applyRoute(routed, facts, e);
  }

  /** load → decide → append on `case.<id>.coordinator`; returns the refusal code, if the decider refused. */
  private async runCase(
    caseId: string,
    commandId: string,
    cause: RecordedEvent | null,
    command: CaseCommand,
    extra: SourceFacts[] = [],
  ): Promise<CaseRefusalCode | null> {
    const before = await this.store.load('case', caseId);
    const known = await this.sourcesOf(before.events, extra);
    const classified = await this.classify(
      command,
      this.context(caseId, before.events, known, extra).sources,
    );
    let refusal: CaseRefusalCode | null = null;
    const result = await this.store.handle({
      aggregate: 'case',
      aggregateId: caseId,
      producer: 'coordinator',
      commandId: commandId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 128),
      causationId: cause?.eventId ?? null,
      correlationId: cause?.correlationId ?? caseId,
      occurredAt: this.now().toISOString(),
      decide: (events) => {
        const d = decideCase(command, events, {
          ...this.context(caseId, events, known, extra),
          classifier: classified,
        });
        refusal = d.ok ? null : d.code;
        if (!d.ok) this.log.info({ caseId, command: command.kind, code: d.code }, d.message);
        return d.ok ? d.events : [];
      },
    });
    for (const ev of result.appended) this.model.apply(ev);
    return refusal;
  }

  private context(
    caseId: string,
    events: readonly RecordedEvent[],
    known: Map<string, SourceFacts>,
    extra: SourceFacts[],
  ): CaseContext {
    const ids: string[] = [];
    for (const e of events) {
      if ((e.type === 'CaseOpened' || e.type === 'SourceLinked') && !ids.includes(e.data.sourceId))
        ids.push(e.data.sourceId);
      if (e.type === 'LinkReviewSettled' && e.data.verdict === 'same') {
        const req = events.find(
          (x) => x.type === 'LinkReviewRequested' && x.data.reviewId === e.data.reviewId,
        );
        if (req?.type === 'LinkReviewRequested' && !ids.includes(req.data.sourceId))
          ids.push(req.data.sourceId);
      }
    }
    for (const x of extra) if (!ids.includes(x.sourceId)) ids.push(x.sourceId);
    const sources = ids
      .map((id) => known.get(id) ?? this.model.factsOf(id))
      .filter((s): s is SourceFacts => s !== null && s !== undefined);
    const first = sources[0];
    return {
      now: this.now().toISOString(),
      sources,
      route: first ? (this.settings.routes.find((r) => r.channelId === first.place.channelId) ?? null) : null,
      repositories: this.settings.repositories,
      classifier: null,
      ...(this.settings.privateMarkers ? { privateMarkers: this.settings.privateMarkers } : {}),
      maxQuestions: this.settings.maxQuestions,
      taskIdleMs: this.settings.taskIdleMs,
      routed: this.model.routedTo(caseId),
    };
  }

  /** Facts (with texts) of every source the case knows of, including held ones, loading any the read model lacks. */
  private async sourcesOf(
    events: readonly RecordedEvent[],
    extra: SourceFacts[],
  ): Promise<Map<string, SourceFacts>> {
    const out = new Map<string, SourceFacts>();
    for (const x of extra) out.set(x.sourceId, x);
    for (const e of events) {
      if (e.type === 'CaseOpened' || e.type === 'SourceLinked' || e.type === 'LinkReviewRequested') {
        if (out.has(e.data.sourceId)) continue;
        const f = await this.facts(e.data.sourceId);
        if (f) out.set(f.sourceId, f);
      }
    }
    return out;
  }

  private async facts(sourceId: string): Promise<SourceFacts | null> {
    const known = this.model.factsOf(sourceId);
    if (known && known.text !== '') return known;
    const { events } = await this.store.load('source', sourceId);
    const rec = events.find((x): x is RecordedEvent<'SourceReceived'> => x.type === 'SourceReceived');
    if (!rec) return known;
    const f = factsFrom(rec);
    this.model.remember(f);
    return f;
  }

  /** The optional classifier's answer for commands that triage; on any failure the rules decide. */
  private async classify(command: CaseCommand, sources: SourceFacts[]): Promise<TriageResult | null> {
    const triages =
      command.kind === 'open_case' ||
      command.kind === 'link_source' ||
      (command.kind === 'observe' && command.event.type === 'CaseMadeActionable');
    if (!this.classifier || !triages || sources.length === 0) return null;
    const scope = privacyScope(sources, this.settings.privateMarkers);
    try {
      return await this.classifier.classify({ texts: scope.texts, keptRatio: scope.keptRatio });
    } catch (e) {
      this.log.warn({ err: (e as Error).name }, 'classifier unavailable; triage by rules');
      return null;
    }
  }

  private async embed(text: string): Promise<number[] | null> {
    if (!this.embeddings || text.trim() === '') return null;
    try {
      const [v] = await this.embeddings.embed([this.model.sanitized(text)]);
      return v ?? null;
    } catch (e) {
      // The embeddings signal is optional: matching goes on with text and signatures.
      this.log.warn(
        { code: (e as { code?: string }).code ?? 'error' },
        'embeddings unavailable for this report',
      );
      return null;
    }
  }
}

function factsFrom(e: RecordedEvent<'SourceReceived'>): SourceFacts {
  return {
    sourceId: e.data.sourceId,
    place: e.data.place,
    reporterId: e.data.authorId,
    text: e.data.content,
    attachments: e.data.attachments.length,
    createdAt: e.data.createdAt,
  };
}

function lastRouted(events: readonly RecordedEvent[]): Routed | null {
  const r = [...events].reverse().find((x): x is RecordedEvent<'SourceRouted'> => x.type === 'SourceRouted');
  return r ? r.data : null;
}
