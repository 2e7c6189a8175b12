import { CaseView, isTerminal } from '@caseloop/case-model';
import type { RecordedEvent } from '@caseloop/contracts';
import type {
  CaseDetailView,
  DeadLetterView,
  DeliveryLine,
  DeliveryState,
  EvidenceItem,
  ReceiptView,
  SourceThread,
  TimelineEntry,
} from './case-detail.types';
import { checksProgress } from './checks.view';
import { claimsOf, describeEvent } from './event-summary.view';
import { safeText } from './view-text';
import { waitingOn } from './waiting.view';

/** `/cases/:id`: one case, from its events and its projected state. */

function postedReceipts(events: readonly RecordedEvent[], receiptId: string): ReceiptView['posted'] {
  const groups = new Map<string, string[]>();
  for (const e of events) {
    if (e.type !== 'DeliveryRequested' || e.data.kind !== 'receipt' || e.data.receiptId !== receiptId)
      continue;
    const content = safeText(e.data.content);
    groups.set(content, [...(groups.get(content) ?? []), e.data.sourceId]);
  }
  return [...groups].map(([content, sourceIds]) => ({ sourceIds, content }));
}

function deliveryLines(state: CaseView, events: readonly RecordedEvent[]): Map<string, DeliveryLine[]> {
  const bySource = new Map<string, DeliveryLine[]>();
  const messages = new Map<string, string[]>();
  const refusals = new Map<string, string>();
  const intended = new Set<string>();
  for (const e of events) {
    if (e.type === 'DeliveryConfirmed')
      messages.set(e.data.deliveryId, [...(messages.get(e.data.deliveryId) ?? []), e.data.discordMessageId]);
    if (e.type === 'DeliveryRefused') refusals.set(e.data.deliveryId, e.data.reason);
    if (e.type === 'DeliveryIntended') intended.add(e.data.deliveryId);
  }
  for (const d of state.deliveries) {
    const line: DeliveryLine = {
      deliveryId: d.deliveryId,
      kind: d.kind,
      receiptId: d.receiptId,
      state: deliveryState(d, intended.has(d.deliveryId)),
      chunks: { confirmed: d.confirmedChunks.length, total: d.chunkCount },
      discordMessageIds: messages.get(d.deliveryId) ?? [],
      refusal: refusals.get(d.deliveryId) ?? null,
    };
    bySource.set(d.sourceId, [...(bySource.get(d.sourceId) ?? []), line]);
  }
  return bySource;
}

function deliveryState(d: CaseView['deliveries'][number], wasIntended: boolean): DeliveryState {
  if (d.refused) return 'refused';
  if (d.confirmed) return 'confirmed';
  if (d.confirmedChunks.length > 0) return 'partly_confirmed';
  return wasIntended ? 'intended' : 'requested';
}

/** Mirrors what the evidence service will link: stored, and cleared by review or approved by a reviewer. */
function evidenceItems(events: readonly RecordedEvent[], evidenceBaseUrl: string | null): EvidenceItem[] {
  const captures = new Map<string, RecordedEvent<'CaptureTaken'>>();
  const reviews = new Map<string, RecordedEvent<'ArtifactReviewed'>>();
  const approved = new Set<string>();
  for (const e of events) {
    if (e.type === 'CaptureTaken') captures.set(e.data.captureId, e);
    if (e.type === 'ArtifactReviewed') reviews.set(e.data.artifactId, e);
    if (e.type === 'PrivacyApproved') approved.add(e.data.artifactSha256);
  }
  const out: EvidenceItem[] = [];
  for (const e of events) {
    if (e.type !== 'ArtifactStored') continue;
    const d = e.data;
    const review = reviews.get(d.artifactId)?.data.decision ?? null;
    const shareable =
      review === 'cleared' || review === 'redacted' || (review === 'needs_human' && approved.has(d.sha256));
    const capture = d.captureId ? captures.get(d.captureId) : undefined;
    const url =
      shareable && evidenceBaseUrl
        ? `${evidenceBaseUrl}/evidence/${d.key.split('/').map(encodeURIComponent).join('/')}`
        : null;
    out.push({
      artifactId: d.artifactId,
      kind: d.kind,
      key: d.key,
      sha256: d.sha256,
      bytes: d.bytes,
      contentType: d.contentType,
      revision: d.revision,
      captureId: d.captureId,
      leaseToken: d.leaseToken ?? capture?.data.leaseToken ?? null,
      step: capture ? safeText(capture.data.step) : null,
      pageTitle: capture ? safeText(capture.data.page.title) : null,
      review,
      shareable,
      url,
      thumbnail: url !== null && d.kind === 'screenshot' && d.contentType.startsWith('image/'),
    });
  }
  return out;
}

export function caseDetail(input: {
  state: CaseView;
  /** The case's events and those of its sources' subjects, any order. */
  events: readonly RecordedEvent[];
  candidates: readonly RecordedEvent<'ImprovementCandidateRecorded'>[];
  deadLetters: readonly DeadLetterView[];
  evidenceBaseUrl: string | null;
  now: string;
}): CaseDetailView {
  const s = input.state;
  const events = [...input.events].sort((a, b) => a.seq - b.seq);
  const timeline = events.map((e): TimelineEntry => {
    const d = describeEvent(e);
    return {
      seq: e.seq,
      type: e.type,
      producer: e.producer,
      aggregate: e.aggregate,
      occurredAt: e.occurredAt,
      tone: d.tone ?? 'neutral',
      summary: d.summary,
      facts: d.facts ?? [],
      reasons: d.reasons ?? [],
      claims: d.claims ?? null,
    };
  });
  const deliveries = deliveryLines(s, events);
  const sources: SourceThread[] = s.sources.map((x) => ({
    sourceId: x.sourceId,
    channelId: x.channelId,
    threadId: x.threadId,
    messageId: x.messageId,
    reporterId: x.reporterId,
    via: x.via,
    deliveries: deliveries.get(x.sourceId) ?? [],
  }));
  const lastGate = events
    .filter((e): e is RecordedEvent<'GateEvaluated'> => e.type === 'GateEvaluated')
    .at(-1);
  const receipts = events
    .filter((e): e is RecordedEvent<'ReceiptBuilt'> => e.type === 'ReceiptBuilt')
    .map((e): ReceiptView => ({
      receiptId: e.data.receiptId,
      seq: e.seq,
      outcome: e.data.outcome,
      revision: e.data.revision,
      builtAt: e.data.builtAt,
      rendered: safeText(e.data.rendered),
      posted: postedReceipts(events, e.data.receiptId),
      residualRisk: safeText(e.data.residualRisk),
      humanAction: safeText(e.data.humanAction),
      threads: sources.map((src) => {
        const line = src.deliveries.find((d) => d.kind === 'receipt' && d.receiptId === e.data.receiptId);
        return { sourceId: src.sourceId, state: line?.state ?? 'not_routed' };
      }),
    }));
  const findings = events
    .filter((e): e is RecordedEvent<'FindingRecorded'> => e.type === 'FindingRecorded')
    .map((e) => ({
      seq: e.seq,
      findingId: e.data.findingId,
      kind: e.data.kind,
      owner: e.data.owner,
      detail: safeText(e.data.detail),
      occurredAt: e.occurredAt,
    }));
  return {
    kind: 'case',
    generatedAt: input.now,
    summary: {
      caseId: s.caseId,
      title: safeText(s.title),
      status: s.status,
      live: !isTerminal(s.status),
      classification: s.classification,
      owner: s.owner,
      taskId: s.taskId,
      repository: s.repository,
      targetBranch: s.targetBranch,
      revision: s.revision,
      targetHead: s.targetHead,
      branch: s.branch,
      openedAt: s.openedAt,
      updatedAt: s.updatedAt,
      lastSeq: s.lastSeq,
      privacyCategories: s.privacyCategories,
      missing: s.missing,
      decision: s.decision,
    },
    sources,
    timeline,
    gate: lastGate
      ? {
          seq: lastGate.seq,
          complete: lastGate.data.complete,
          outcome: lastGate.data.outcome,
          revision: lastGate.data.revision,
          claims: claimsOf(lastGate),
        }
      : null,
    evidence: evidenceItems(events, input.evidenceBaseUrl),
    checks: checksProgress(events),
    receipts,
    findings,
    candidates: input.candidates.map((e) => ({
      candidateId: e.data.candidateId,
      kind: e.data.kind,
      caseIds: e.data.caseIds,
      summary: safeText(e.data.summary),
      windowStart: e.data.windowStart,
      windowEnd: e.data.windowEnd,
    })),
    deadLetters: [...input.deadLetters],
    waiting: waitingOn(s, events),
  };
}
