import { RecordedEvent } from '@caseloop/contracts';
import { EventStore } from '@caseloop/ledger';
import { CoordinatorSettings } from '../coordinator.settings';
import { IdentityReadModel } from '../identity/identity.read-model';
import { privacyScope } from '../triage/privacy-scope';
import { CaseClassifierPort, TriageResult } from '../triage/triage.rules';
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
  ) {}

  /** The context of one decision; `extra` are sources the command brings (a joining report). */
  async build(
    caseId: string,
    state: DecisionState,
    command: CaseCommand,
    extra: readonly SourceFacts[],
    memo: { key: string; triage: TriageResult | null } | null,
  ): Promise<{ ctx: CaseContext; memo: { key: string; triage: TriageResult | null } | null }> {
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
    if (!this.classifier || !triages(command) || sources.length === 0) return { ctx: base, memo };
    // The scope is computed here once and handed to the decider with the context.
    const scope = privacyScope(sources, this.settings.privateMarkers);
    const key = sources.map((s) => s.sourceId).join(' ');
    const triage = memo?.key === key ? memo.triage : await this.classify(scope);
    return { ctx: { ...base, scope, classifier: triage }, memo: { key, triage } };
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
    createdAt: e.data.createdAt,
  };
}
