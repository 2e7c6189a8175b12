import { isTerminal, CaseStatus } from '@caseloop/case-model';
import { RecordedEvent } from '@caseloop/contracts';
import { IdentityConfig, IdentityIndex } from '@caseloop/identity';
import { sanitizeReport } from '@caseloop/privacy';
import { SourceFacts } from '../cases/case.commands';

type RouteOutcome = RecordedEvent<'SourceRouted'>['data']['outcome'];

const TERMINAL_EVENTS: Partial<Record<string, CaseStatus>> = {
  CaseApproved: 'approved',
  CaseRejected: 'rejected',
  CaseMarkedDuplicate: 'duplicate',
};

/**
 * The coordinator's read model for identity: which sources are known and where they went,
 * which thread belongs to which case, and a semantic index over the open cases. It is rebuilt
 * from the ledger at start and kept current from events (its own appends are applied at once,
 * so the next report sees the case the previous one opened). Applying an event twice is harmless.
 * It is never a source of truth: each routing decision is recorded (SourceRouted) with its reasons.
 */
export class IdentityReadModel {
  readonly index: IdentityIndex;
  private readonly facts = new Map<string, SourceFacts>();
  private readonly routed = new Map<string, string>();
  /** The last recorded routing of each source (SourceRouted only: what the coordinator decided). */
  private readonly routes = new Map<string, { caseId: string; outcome: RouteOutcome }>();
  /** `<caseId> <sourceId>` of every report held on a case for a link review. */
  private readonly held = new Set<string>();
  private readonly threads = new Map<string, string>();
  private readonly caseSources = new Map<string, Set<string>>();
  private readonly open = new Set<string>();
  private readonly closed = new Set<string>();
  private readonly vectors = new Map<string, number[]>();
  private readonly markers: readonly string[] | undefined;

  constructor(config: IdentityConfig, markers?: readonly string[]) {
    this.index = new IdentityIndex(config);
    this.markers = markers;
  }

  apply(e: RecordedEvent): void {
    switch (e.type) {
      case 'SourceReceived': {
        const d = e.data;
        if (!this.facts.has(d.sourceId)) {
          this.facts.set(d.sourceId, {
            sourceId: d.sourceId,
            place: d.place,
            reporterId: d.authorId,
            text: d.content,
            rawChars: d.rawChars,
            attachments: d.attachments.length,
            attachmentNames: d.attachments.map((a) => a.name),
            createdAt: d.createdAt,
          });
        }
        // A source recorded after its case already listed it (replay order): index it now.
        const caseId = this.routed.get(d.sourceId);
        if (caseId && this.open.has(caseId) && (this.caseSources.get(caseId)?.has(d.sourceId) ?? false))
          this.indexSource(caseId, d.sourceId);
        return;
      }
      case 'SourceRouted': {
        const { sourceId, caseId, outcome } = e.data;
        this.routed.set(sourceId, caseId);
        this.routes.set(sourceId, { caseId, outcome });
        // The decision is what the next report must be compared with, whether or not the case
        // write derived from it has landed yet (another replica may route the next report first).
        if ((outcome === 'opened' || outcome === 'linked') && !this.closed.has(caseId))
          this.indexSource(caseId, sourceId);
        return;
      }
      case 'CaseOpened':
      case 'SourceLinked': {
        const caseId = e.aggregateId;
        if (this.closed.has(caseId)) return;
        this.open.add(caseId);
        this.routed.set(e.data.sourceId, caseId);
        this.threads.set(e.data.place.messageId, caseId);
        if (e.data.place.threadId && e.type === 'CaseOpened') this.threads.set(e.data.place.threadId, caseId);
        let set = this.caseSources.get(caseId);
        if (!set) this.caseSources.set(caseId, (set = new Set()));
        set.add(e.data.sourceId);
        this.indexSource(caseId, e.data.sourceId);
        return;
      }
      case 'LinkReviewRequested':
        this.threads.set(e.data.place.messageId, e.aggregateId);
        this.held.add(`${e.aggregateId} ${e.data.sourceId}`);
        return;
      case 'DeliveryConfirmed':
        if (e.data.threadId) this.threads.set(e.data.threadId, e.aggregateId);
        return;
      default: {
        const status = TERMINAL_EVENTS[e.type];
        if (e.aggregate === 'case' && status && isTerminal(status)) this.close(e.aggregateId);
      }
    }
  }

  /** The case a source already went to, if any (exact identity: a message is one source forever). */
  caseOfSource(sourceId: string): string | null {
    return this.routed.get(sourceId) ?? null;
  }

  /** The case whose thread this is (a reply in a case thread belongs to that case). */
  caseOfThread(threadId: string): string | null {
    const c = this.threads.get(threadId);
    return c && !this.closed.has(c) ? c : null;
  }

  /** Every source whose last routing names this case: the review gate waits until each is on it. */
  routedTo(caseId: string): string[] {
    const out: string[] = [];
    for (const [sourceId, r] of this.routes) if (r.caseId === caseId) out.push(sourceId);
    return out;
  }

  /**
   * Sources whose routing is recorded but whose case does not show them yet (no CaseOpened,
   * SourceLinked or LinkReviewRequested): a handler stopped between the two writes. Finishing
   * them is idempotent; `caseId` narrows the answer to the sources routed to one case.
   */
  unfinishedRoutes(caseId?: string): string[] {
    const out: string[] = [];
    for (const [sourceId, r] of this.routes)
      if ((caseId === undefined || r.caseId === caseId) && !this.landed(sourceId, r)) out.push(sourceId);
    return out;
  }

  routeUnfinished(sourceId: string): boolean {
    const r = this.routes.get(sourceId);
    return r !== undefined && !this.landed(sourceId, r);
  }

  factsOf(sourceId: string): SourceFacts | null {
    return this.facts.get(sourceId) ?? null;
  }

  remember(facts: SourceFacts): void {
    if (!this.facts.has(facts.sourceId)) this.facts.set(facts.sourceId, facts);
  }

  /** An embedding for a source, used when it is indexed (embeddings are an optional signal). */
  setEmbedding(sourceId: string, vector: number[] | null): void {
    if (vector) this.vectors.set(sourceId, vector);
  }

  openCases(): string[] {
    return [...this.open];
  }

  /** What the index compares: the sanitized text (private context must not steer matching either). */
  sanitized(text: string): string {
    return sanitizeReport(text, this.markers ? { privateMarkers: this.markers } : {}).brief;
  }

  private landed(sourceId: string, r: { caseId: string; outcome: RouteOutcome }): boolean {
    return r.outcome === 'held'
      ? this.held.has(`${r.caseId} ${sourceId}`)
      : (this.caseSources.get(r.caseId)?.has(sourceId) ?? false);
  }

  private indexSource(caseId: string, sourceId: string): void {
    const f = this.facts.get(sourceId);
    // The report's own time (when it was written), so recency is what the model was fitted with.
    if (f)
      this.index.add(
        caseId,
        sourceId,
        this.sanitized(f.text),
        this.vectors.get(sourceId) ?? null,
        reportTime(f.createdAt),
      );
  }

  private close(caseId: string): void {
    this.closed.add(caseId);
    this.open.delete(caseId);
    this.index.remove(caseId);
    for (const s of this.caseSources.get(caseId) ?? []) {
      this.vectors.delete(s);
      const f = this.facts.get(s);
      // Keep ids and places (exact identity, threads); drop texts of closed cases.
      if (f) this.facts.set(s, { ...f, text: '' });
    }
  }
}

/** A report's written time in ms, or null when it is missing or unreadable (recency then counts as unknown). */
export function reportTime(createdAt: string | null | undefined): number | null {
  const t = createdAt ? Date.parse(createdAt) : NaN;
  return Number.isFinite(t) ? t : null;
}
