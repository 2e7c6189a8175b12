import { DiscordPlace, EventData, EventDraft, RecordedEvent } from '@caseloop/contracts';
import { ChannelRoute } from '../triage/readiness.rules';
import { CheckKind } from './decision/completion-gate';
import { PrivacyScope } from '../triage/privacy-scope';
import { TriageResult } from '../triage/triage.rules';

/** What the coordinator knows about one source (from its SourceReceived). */
export interface SourceFacts {
  sourceId: string;
  place: DiscordPlace;
  reporterId: string;
  /**
   * The report as the ledger keeps it: already redacted by intake (raw text is only sealed there).
   * The privacy scope sanitizes it again, which changes nothing and finds the same categories.
   */
  text: string;
  /** Visible characters of the raw text; the privacy scope's kept share is measured against it. */
  rawChars?: number;
  attachments: number;
  /** Names of the attached files (as intake recorded them; sanitized before a model sees them). */
  attachmentNames?: string[];
  createdAt: string;
}

export interface IdentityEvidence {
  confidence: number;
  reasons: string[];
}

export interface RepositoryRoute {
  id: string;
  owner: string;
  targetBranch: string;
  /** Check kinds the repository configures: the gate requires each to pass. */
  checkKinds: CheckKind[];
}

/** Everything a decision may depend on besides the case's events: time, sources and configuration. */
export interface CaseContext {
  now: string;
  /** The case's sources with their texts, oldest first, including the one the command is about. */
  sources: SourceFacts[];
  route: ChannelRoute | null;
  repositories: RepositoryRoute[];
  /** The privacy scope of `sources`, when the handler already computed it for this command. */
  scope?: PrivacyScope;
  /** An optional classifier's answer; the rules decide when it is null. */
  classifier: TriageResult | null;
  /**
   * A readiness judgement route's answer about the conversation in `scope` (fresh, or recorded
   * earlier for the same prompt); the readiness rules alone decide when it is absent or a fallback.
   */
  readinessJudgement?: EventData<'ReadinessJudged'> | null;
  privateMarkers?: readonly string[];
  maxQuestions: number;
  /**
   * Every source the ledger routed to this case (SourceRouted). Review waits until each is on the
   * case: a routing whose second write has not happened yet must not be overtaken by an approval.
   */
  routed?: readonly string[];
  /** An active task with no worker event for this long is resumed (`worker_restart`) by the clock. */
  taskIdleMs: number;
}

export type CaseCommand =
  | { kind: 'open_case'; caseId: string; source: SourceFacts; identity: IdentityEvidence }
  | { kind: 'link_source'; source: SourceFacts; via: 'semantic_match' | 'thread'; identity: IdentityEvidence }
  | { kind: 'hold_source'; source: SourceFacts; reviewId: string; identity: IdentityEvidence }
  /** A fact another producer recorded on this case (intake, worker, evidence). */
  | { kind: 'observe'; event: RecordedEvent }
  /** The clock: finish what an interrupted handler left (routing, awaiting review, readiness). */
  | { kind: 'reexamine' };

export type CaseRefusalCode = 'case_not_found' | 'case_exists' | 'case_closed' | 'not_a_case_event';

export type CaseDecision =
  { ok: true; events: EventDraft[] } | { ok: false; code: CaseRefusalCode; message: string };
