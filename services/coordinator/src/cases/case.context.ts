import { isTerminal } from '@caseloop/case-model';
import { EventData, RecordedEvent } from '@caseloop/contracts';
import {
  judgeReadiness,
  ModelAdapter,
  promptHash,
  ReadinessJudgement,
  ReadinessQuestion,
  readinessPrompt,
} from '@caseloop/identity';
import { EventStore } from '@caseloop/ledger';
import { CoordinatorSettings } from '../coordinator.settings';
import { IdentityReadModel } from '../identity/identity.read-model';
import { attachmentNames, privacyScope, PrivacyScope } from '../triage/privacy-scope';
import { CaseClassifierPort, classifyByRules, DISPATCHABLE, TriageResult } from '../triage/triage.rules';
import { CaseCommand, CaseContext, SourceFacts } from './case.commands';
import { DecisionState } from './decision/case-record.evolve';

export interface CoordinatorLog {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

/** Commands whose decision may triage the case, and so may ask the optional classifier. */
const triages = (command: CaseCommand): boolean =>
  command.kind === 'open_case' ||
  command.kind === 'link_source' ||
  (command.kind === 'observe' && command.event.type === 'CaseMadeActionable');

/** Commands whose decision may assess readiness (a report or a reply joins, a reviewer settles a link). */
const assesses = (command: CaseCommand): boolean =>
  triages(command) ||
  (command.kind === 'observe' &&
    command.event.type === 'LinkReviewSettled' &&
    command.event.data.verdict === 'same');

/** The case may still be dispatched by the rules (no task yet, open, no reviewer vouched for it). */
const undispatched = (state: DecisionState): boolean =>
  state.status === 'none' ||
  (!isTerminal(state.status) && state.task === 'none' && state.madeActionableBy === null);

/** What one command's decision asked the optional ports, kept across its retries. */
export interface ContextMemo {
  /** The case's source ids the answers are about. */
  key: string;
  /** The classifier's answer (undefined: not asked). */
  triage?: TriageResult | null;
  /** The readiness route's answer (undefined: not asked). */
  readiness?: EventData<'ReadinessJudged'> | null;
}

export interface ContextHooks {
  /** A readiness judgement route answered (or fell back): for the metric. */
  readinessJudged?(j: ReadinessJudgement): void;
}

/**
 * Everything a case decision depends on besides the case itself: the sources' texts (from the
 * read model, or from their SourceReceived when it lacks them), the configuration, the time,
 * the sources routed to the case, and the optional classifier's answer over the privacy scope.
 */
export class CaseContextSource {
  constructor(
    private readonly store: EventStore,
    private readonly model: IdentityReadModel,
    private readonly settings: CoordinatorSettings,
    private readonly log: CoordinatorLog,
    private readonly now: () => Date,
    private readonly classifier: CaseClassifierPort | null,
    /** The pinned readiness judgement route, or null (the readiness rules alone). */
    private readonly readiness: ModelAdapter | null = null,
    private readonly hooks: ContextHooks = {},
  ) {}

  /** The context of one decision; `extra` are sources the command brings (a joining report). */
  async build(
    caseId: string,
    state: DecisionState,
    command: CaseCommand,
    extra: readonly SourceFacts[],
    memo: ContextMemo | null,
  ): Promise<{ ctx: CaseContext; memo: ContextMemo | null }> {
    const ids: string[] = [];
    const add = (id: string) => ids.includes(id) || ids.push(id);
    if (state.status !== 'none') {
      for (const s of state.sources) add(s.sourceId);
      // A report a reviewer just settled as the same case joins with this decision.
      for (const r of state.linkReviews) if (r.verdict === 'same') add(r.sourceId);
    }
    for (const x of extra) add(x.sourceId);
    const sources: SourceFacts[] = [];
    for (const id of ids) {
      const f = extra.find((x) => x.sourceId === id) ?? (await this.facts(id));
      if (f) sources.push(f);
    }
    const first = sources[0];
    const base: CaseContext = {
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
    const asksClassifier = this.classifier !== null && triages(command);
    const asksReadiness = this.readiness !== null && assesses(command) && undispatched(state);
    if ((!asksClassifier && !asksReadiness) || sources.length === 0) return { ctx: base, memo };
    // The scope is computed here once and handed to the decider with the context.
    const scope = privacyScope(sources, this.settings.privateMarkers);
    const key = sources.map((s) => s.sourceId).join(' ');
    const same = memo?.key === key ? memo : null;
    const next: ContextMemo = { key };
    let triage: TriageResult | null = null;
    if (asksClassifier) {
      triage = same?.triage !== undefined ? same.triage : await this.classify(scope);
      next.triage = triage;
    }
    let readiness: EventData<'ReadinessJudged'> | null = null;
    // Only a case the rules would dispatch is worth a readiness question.
    if (
      asksReadiness &&
      DISPATCHABLE.includes(
        (triage ?? classifyByRules({ texts: scope.texts, keptRatio: scope.keptRatio })).classification,
      )
    ) {
      readiness =
        same?.readiness !== undefined
          ? same.readiness
          : await this.judgeReadiness(caseId, state, scope, sources);
      next.readiness = readiness;
    }
    const ctx: CaseContext = { ...base, scope, classifier: triage };
    if (asksReadiness) ctx.readinessJudgement = readiness;
    return { ctx, memo: next };
  }

  /**
   * The readiness route's answer about the conversation: the sanitized brief and attachment names
   * only. A judgement the case already recorded for the same prompt is read back, never asked
   * again; a fallback is logged (route and reason, no text) and the rules decide.
   */
  private async judgeReadiness(
    caseId: string,
    state: DecisionState,
    scope: PrivacyScope,
    sources: readonly SourceFacts[],
  ): Promise<EventData<'ReadinessJudged'>> {
    const question: ReadinessQuestion = {
      conversation: scope.brief,
      attachments: attachmentNames(sources, this.settings.privateMarkers),
    };
    const hash = promptHash(readinessPrompt(question));
    const recorded =
      state.status === 'none' ? undefined : state.rules.readinessJudged.find((j) => j.promptHash === hash);
    if (recorded) return recorded;
    const j = await judgeReadiness(this.readiness!, question);
    this.hooks.readinessJudged?.(j);
    if (j.fallback)
      this.log.warn(
        { caseId, route: j.route, reason: j.fallback.reason, durationMs: j.durationMs },
        'readiness route did not answer usably; the readiness rules decide',
      );
    return {
      route: j.route.slice(0, 200),
      promptHash: j.promptHash,
      supplied: j.supplied,
      missing: j.missing,
      rationale: j.rationale.slice(0, 600),
      fallback: j.fallback && { reason: j.fallback.reason, detail: j.fallback.detail.slice(0, 300) },
      durationMs: Math.max(0, Math.round(j.durationMs)),
    };
  }

  /** A source's facts with its text, loading its SourceReceived when the read model lacks them. */
  async facts(sourceId: string): Promise<SourceFacts | null> {
    const known = this.model.factsOf(sourceId);
    if (known && known.text !== '') return known;
    const { events } = await this.store.load('source', sourceId);
    const rec = events.find((x): x is RecordedEvent<'SourceReceived'> => x.type === 'SourceReceived');
    if (!rec) return known;
    const f = factsFrom(rec);
    this.model.remember(f);
    return f;
  }

  /** The optional classifier's answer; on any failure the rules decide. */
  private async classify(scope: { texts: string[]; keptRatio: number }): Promise<TriageResult | null> {
    try {
      return await this.classifier!.classify({ texts: scope.texts, keptRatio: scope.keptRatio });
    } catch (e) {
      this.log.warn({ err: (e as Error).name }, 'classifier unavailable; triage by rules');
      return null;
    }
  }
}

export function factsFrom(e: RecordedEvent<'SourceReceived'>): SourceFacts {
  return {
    sourceId: e.data.sourceId,
    place: e.data.place,
    reporterId: e.data.authorId,
    text: e.data.content,
    rawChars: e.data.rawChars,
    attachments: e.data.attachments.length,
    attachmentNames: e.data.attachments.map((a) => a.name),
    createdAt: e.data.createdAt,
  };
}
