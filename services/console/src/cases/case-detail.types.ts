import type { CaseStatus, CaseView } from '@caseloop/case-model';
import type { ChecksProgressView } from './checks.view';
import type { WaitingItem } from './waiting.view';

/** `/cases/:id`: the shapes of one case's view. */

export interface Fact {
  label: string;
  value: string;
}

export interface Claim {
  name: 'checks' | 'revision' | 'client' | 'evidence';
  ok: boolean;
  detail: string;
}

export type Tone = 'neutral' | 'good' | 'bad' | 'warn' | 'info';

export interface TimelineEntry {
  seq: number;
  type: string;
  producer: string;
  aggregate: string;
  occurredAt: string;
  tone: Tone;
  summary: string;
  facts: Fact[];
  reasons: string[];
  claims: Claim[] | null;
}

export type DeliveryState = 'confirmed' | 'partly_confirmed' | 'intended' | 'requested' | 'refused';

export interface DeliveryLine {
  deliveryId: string;
  kind: string;
  receiptId: string | null;
  state: DeliveryState;
  chunks: { confirmed: number; total: number | null };
  discordMessageIds: string[];
  refusal: string | null;
}

export interface SourceThread {
  sourceId: string;
  channelId: string;
  threadId: string | null;
  messageId: string;
  reporterId: string;
  via: string;
  deliveries: DeliveryLine[];
}

export interface EvidenceItem {
  artifactId: string;
  kind: string;
  key: string;
  sha256: string;
  bytes: number;
  contentType: string;
  revision: string;
  captureId: string | null;
  leaseToken: number | null;
  step: string | null;
  pageTitle: string | null;
  review: string | null;
  /** Linked only when cleared by its review or approved by a reviewer. */
  shareable: boolean;
  /** The evidence service's stable address (302 to a short-lived presigned link), when shareable. */
  url: string | null;
  thumbnail: boolean;
}

export interface ReceiptView {
  receiptId: string;
  seq: number;
  outcome: string;
  revision: string;
  builtAt: string;
  /** As the evidence service rendered it. */
  rendered: string;
  /** What the outbox was asked to post, grouped by identical text, with the threads it went to. */
  posted: { sourceIds: string[]; content: string }[];
  residualRisk: string;
  humanAction: string;
  /** Per source thread: was this receipt confirmed there. */
  threads: { sourceId: string; state: DeliveryState | 'not_routed' }[];
}

export interface FindingView {
  seq: number;
  findingId: string;
  kind: string;
  owner: string;
  detail: string;
  occurredAt: string;
}

export interface CandidateView {
  candidateId: string;
  kind: string;
  caseIds: string[];
  summary: string;
  windowStart: string;
  windowEnd: string;
}

export interface DeadLetterView {
  origin: 'consumer' | 'projection';
  seq: number;
  consumer: string;
  code: string | null;
  reason: string | null;
}

export interface CaseDetailView {
  kind: 'case';
  generatedAt: string;
  summary: {
    caseId: string;
    title: string;
    status: CaseStatus;
    live: boolean;
    classification: string | null;
    owner: string | null;
    taskId: string | null;
    repository: string | null;
    targetBranch: string | null;
    revision: string | null;
    targetHead: string | null;
    branch: string | null;
    openedAt: string;
    updatedAt: string;
    lastSeq: number;
    privacyCategories: string[];
    missing: string[];
    decision: CaseView['decision'];
  };
  sources: SourceThread[];
  timeline: TimelineEntry[];
  gate: { seq: number; complete: boolean; outcome: string | null; revision: string; claims: Claim[] } | null;
  evidence: EvidenceItem[];
  receipts: ReceiptView[];
  findings: FindingView[];
  candidates: CandidateView[];
  deadLetters: DeadLetterView[];
  waiting: WaitingItem[];
  /** The latest run of the checks, check by check, as the worker reports it while they run. */
  checks: ChecksProgressView | null;
}

/** What one timeline event says, as a reviewer may see it. */
export interface Described {
  summary: string;
  tone?: Tone;
  facts?: Fact[];
  reasons?: string[];
  claims?: Claim[];
}
