import { createHash } from 'node:crypto';
import { checkOutputArtifactPath, draft, EventDraft, RecordedEvent } from '@caseloop/contracts';
import type { EventStore } from '@caseloop/ledger';
import { DependencyUnavailable, TransientError } from '@caseloop/ledger';
import type { ClientSpec, TargetRepository } from '@caseloop/target-repositories';
import { ClientPhaseResult, ClientValidationRunner, flowName } from '../browser/client-validation.runner';
import { buildReceipt } from '../receipt/receipt.builder';
import { ArtifactUnderReview, redactedLine, reviewArtifact } from '../review/artifact.review';
import { AppSetup } from '../code/app-setup';
import { CaseCodeError, CaseCodeSource } from '../code/case-code.source';
import { S3ArtifactStore, StorageError } from '../storage/s3-artifact.store';
import {
  ArtifactFact,
  checkLogArtifactId,
  ClientFacts,
  EvidenceTrigger,
  nextStep,
  proofCommandId,
  proofEvents,
  approvalCommandId,
  approvalReceiptIdOf,
  receiptCommandId,
  receiptIdOf,
  receiptToRebuild,
  repositoryOf,
  triggerOf,
} from './evidence.decider';

export interface EvidenceHandlerDeps {
  store: EventStore;
  artifacts: S3ArtifactStore;
  runner: ClientValidationRunner;
  /** The code under validation, fetched from the repository's remote (never another service's disk). */
  code: CaseCodeSource;
  /** The repository's setup steps, run in a fresh checkout before its client starts. */
  setup: AppSetup;
  /** The check-log bucket the worker stores whole check logs in (null: no object at that key). */
  checkLogs: { read(key: string): Promise<Buffer | null> };
  repository: (id: string) => TargetRepository | undefined;
  resource: string;
  /** The evidence service's public URL: receipts link to it; placeholders when null. */
  linkBase: string | null;
  now: () => Date;
}

export type HandlerResult = {
  /** `waiting`: the revision is not on the remote yet; its `BranchPushed` starts the work again. */
  status: 'ignored' | 'done' | 'superseded' | 'receipt_built' | 'waiting';
  receiptId: string | null;
};

const sha256Of = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/**
 * On a passing check run: client validation (when the repository declares a client), privacy
 * review and verified storage of every artifact, then the receipt from what the ledger holds.
 * Load → decide → act → append, twice (proof, then receipt); each command's id derives from the
 * trigger, so redelivery resumes where the ledger says it stopped and never repeats a phase it recorded.
 */
export class EvidenceHandler {
  constructor(private readonly deps: EvidenceHandlerDeps) {}

  async onChecksCompleted(event: RecordedEvent): Promise<HandlerResult> {
    const trigger = triggerOf(event);
    if (!trigger) return { status: 'ignored', receiptId: null };
    const before = (await this.load(trigger)).events;
    const step = nextStep(before, trigger);
    if (step.status === 'done') return { status: 'done', receiptId: receiptIdOf(trigger) };
    if (step.status === 'superseded') return { status: 'superseded', receiptId: null };
    if (step.status === 'gather_proof') {
      const repoId = repositoryOf(before, trigger.taskId);
      const repo = repoId ? this.deps.repository(repoId) : undefined;
      if (repo && (await this.fetchCode(repo, trigger)) === 'absent')
        return { status: 'waiting', receiptId: null };
      await this.append(trigger, proofCommandId(trigger), await this.gatherProof(trigger, before));
    }

    const { events } = await this.load(trigger);
    return this.publishReceipt(
      trigger,
      events,
      receiptIdOf(trigger),
      receiptCommandId(trigger),
      trigger.eventId,
    );
  }

  /**
   * The worker pushed a revision: the passing check run on it (if its proof is still owed) can now
   * be proven from the remote. Redelivery and the `ChecksCompleted` path meet in the same commands.
   */
  async onBranchPushed(event: RecordedEvent): Promise<HandlerResult> {
    if (event.type !== 'BranchPushed') return { status: 'ignored', receiptId: null };
    const { events } = await this.deps.store.load('case', event.aggregateId);
    const checks = events
      .filter(
        (e) =>
          e.type === 'ChecksCompleted' &&
          e.data.passed &&
          e.data.taskId === event.data.taskId &&
          e.data.revision === event.data.revision &&
          e.seq < event.seq,
      )
      .at(-1);
    if (!checks) return { status: 'ignored', receiptId: null };
    return this.onChecksCompleted(checks);
  }

  private async fetchCode(repo: TargetRepository, trigger: EvidenceTrigger): Promise<'present' | 'absent'> {
    try {
      return await this.deps.code.fetch(repo, trigger.caseId, trigger.revision);
    } catch (e) {
      // A remote out of reach is retried by redelivery; the proof is not given up on.
      if (e instanceof CaseCodeError) throw new TransientError(e.message, { cause: e });
      throw e;
    }
  }

  /** A reviewer approved a screenshot the current receipt lists unlinked: the receipt is built again. */
  async onPrivacyApproved(event: RecordedEvent): Promise<HandlerResult> {
    if (event.type !== 'PrivacyApproved') return { status: 'ignored', receiptId: null };
    const { events } = await this.deps.store.load('case', event.aggregateId);
    const trigger = receiptToRebuild(events, event);
    if (!trigger) return { status: 'ignored', receiptId: null };
    return this.publishReceipt(
      trigger,
      events,
      approvalReceiptIdOf(trigger, event),
      approvalCommandId(event),
      event.eventId,
    );
  }

  private async publishReceipt(
    trigger: EvidenceTrigger,
    events: RecordedEvent[],
    receiptId: string,
    commandId: string,
    causationId: string,
  ): Promise<HandlerResult> {
    const receipt = buildReceipt(events, {
      receiptId,
      builtAt: this.deps.now().toISOString(),
      linkBase: this.deps.linkBase,
    });
    if (!receipt) return { status: 'ignored', receiptId: null };
    const review = reviewArtifact({ kind: 'receipt', text: receipt.rendered });
    const rendered = new TextDecoder().decode(review.content);
    const fact = await this.storeReviewed(trigger, receipt.receiptId, 'receipt', review, null, null);
    await this.append(
      trigger,
      commandId,
      [...proofEvents(trigger, null, [fact]), draft('ReceiptBuilt', { ...receipt, rendered })],
      causationId,
    );
    return { status: 'receipt_built', receiptId: receipt.receiptId };
  }

  private async gatherProof(trigger: EvidenceTrigger, events: RecordedEvent[]): Promise<EventDraft[]> {
    const repoId = repositoryOf(events, trigger.taskId);
    const repo = repoId ? this.deps.repository(repoId) : undefined;
    const artifacts: ArtifactFact[] = [];

    let client: ClientFacts | null = null;
    if (repo?.client) {
      const phase = await this.clientPhase(trigger, repo, repo.client);
      const captures = phase.captures.map((c) => ({ ...c, sha256: sha256Of(c.png) }));
      client = {
        flow: phase.flow,
        resource: phase.resource,
        outcome: phase.outcome,
        reason: phase.reason === null ? null : redactedLine(phase.reason).slice(0, 1000),
        captures: captures.map(({ captureId, step, page, sha256, leaseToken, takenAt }) => ({
          captureId,
          step: redactedLine(step).slice(0, 200),
          // A page that is not fixture data may show personal data even in its title or path.
          page: { url: redactedLine(page.url).slice(0, 2048), title: redactedLine(page.title).slice(0, 500) },
          sha256,
          leaseToken,
          takenAt,
        })),
        voided: phase.voided.map(({ captureId, reason }) => ({ captureId, reason })),
      };
      for (const c of phase.captures) {
        const review = reviewArtifact({
          kind: 'screenshot',
          bytes: c.png,
          fixtureData: repo.client.fixtureData,
        });
        artifacts.push(
          await this.storeReviewed(trigger, c.captureId, 'screenshot', review, c.captureId, c.leaseToken),
        );
      }
      if (phase.trace) {
        // A trace holds DOM snapshots: it is cleared on the same terms as the screenshots.
        const review = reviewArtifact({
          kind: 'trace',
          bytes: phase.trace,
          fixtureData: repo.client.fixtureData,
        });
        artifacts.push(
          await this.storeReviewed(trigger, `trace-${trigger.seq}`, 'trace', review, null, phase.leaseToken),
        );
      }
    } else if (!repoId) {
      client = this.blockedClient(`no repository is recorded for task ${trigger.taskId}`);
    } else if (!repo) {
      client = this.blockedClient(`repository ${repoId} is not configured for the evidence service`);
    }

    const checks = events.find((e) => e.seq === trigger.seq);
    if (checks?.type === 'ChecksCompleted') {
      for (const [i, result] of checks.data.results.entries()) {
        if (!result.outputSha256) continue;
        artifacts.push(await this.checkLog(trigger, i, result.outputSha256));
      }
    }
    const diff = repo ? await this.deps.code.diff(repo, trigger.targetHead, trigger.revision) : null;
    if (diff !== null && diff.length > 0) {
      const review = reviewArtifact({ kind: 'diff', text: diff });
      artifacts.push(await this.storeReviewed(trigger, `diff-${trigger.seq}`, 'diff', review, null, null));
    }
    return proofEvents(trigger, client, artifacts);
  }

  /** The client runs from a checkout of exactly the proven revision, made ready by the repository's setup. */
  private async clientPhase(
    trigger: EvidenceTrigger,
    repo: TargetRepository,
    client: ClientSpec,
  ): Promise<ClientPhaseResult> {
    const blocked = (reason: string): ClientPhaseResult => ({
      flow: flowName(client.flow),
      resource: this.deps.resource,
      leaseToken: null,
      outcome: 'blocked',
      reason,
      captures: [],
      voided: [],
      trace: null,
    });
    let checkout;
    try {
      checkout = await this.deps.code.checkout(repo, trigger.caseId, trigger.revision);
    } catch (e) {
      if (e instanceof CaseCodeError) throw new TransientError(e.message, { cause: e });
      throw e;
    }
    if (checkout.status === 'unusable') return blocked(checkout.reason);
    try {
      const unready = await this.deps.setup.prepare(repo, checkout.path);
      if (unready) return blocked(unready);
      return await this.deps.runner.run({
        caseId: trigger.caseId,
        taskId: trigger.taskId,
        revision: trigger.revision,
        worktree: checkout.path,
        client,
        repositoryEnv: repo.env,
        resource: this.deps.resource,
      });
    } finally {
      await checkout.release();
    }
  }

  private blockedClient(reason: string): ClientFacts {
    return {
      flow: 'none',
      resource: this.deps.resource,
      outcome: 'blocked',
      reason,
      captures: [],
      voided: [],
    };
  }

  /** The worker stored the (already redacted) whole log; it is read, its digest checked, and reviewed again. */
  private async checkLog(trigger: EvidenceTrigger, index: number, expected: string): Promise<ArtifactFact> {
    const artifactId = checkLogArtifactId(index, expected);
    let bytes: Buffer | null;
    try {
      bytes = await this.deps.checkLogs.read(
        checkOutputArtifactPath(trigger.caseId, trigger.revision, expected),
      );
    } catch (e) {
      if (e instanceof StorageError && e.code === 'unavailable')
        throw new DependencyUnavailable('object store', e.message, { cause: e });
      throw e;
    }
    if (bytes === null || sha256Of(bytes) !== expected) {
      return {
        review: {
          artifactId,
          kind: 'check_log',
          sha256: expected,
          decision: 'rejected',
          redactions: [],
          basis:
            bytes === null
              ? 'the check output is missing from the check-log bucket'
              : 'the check output differs from its recorded digest',
        },
      };
    }
    const review = reviewArtifact({ kind: 'check_log', text: bytes.toString('utf8') });
    return this.storeReviewed(trigger, artifactId, 'check_log', review, null, null);
  }

  private async storeReviewed(
    trigger: EvidenceTrigger,
    artifactId: string,
    kind: ArtifactUnderReview['kind'],
    review: ReturnType<typeof reviewArtifact>,
    captureId: string | null,
    leaseToken: number | null,
  ): Promise<ArtifactFact> {
    const sha256 = sha256Of(review.content);
    const reviewed = {
      artifactId,
      kind,
      sha256,
      decision: review.decision,
      redactions: review.redactions,
      basis: review.basis,
    };
    let outcome;
    try {
      outcome = await this.deps.artifacts.store({
        caseId: trigger.caseId,
        revision: trigger.revision,
        body: review.content,
        contentType: review.contentType,
        tags: {
          case: trigger.caseId,
          task: trigger.taskId,
          revision: trigger.revision,
          kind,
          artifact: artifactId,
          review: review.decision,
          ...(captureId ? { capture: captureId } : {}),
          ...(leaseToken !== null ? { 'lease-token': String(leaseToken) } : {}),
        },
      });
    } catch (e) {
      if (e instanceof StorageError && e.code === 'unavailable')
        throw new DependencyUnavailable('object store', e.message, { cause: e });
      throw e;
    }
    if (outcome.status === 'durability_failed')
      return { review: reviewed, lost: { key: outcome.key, actual: outcome.actual } };
    return {
      review: reviewed,
      stored: {
        key: outcome.key,
        bytes: outcome.bytes,
        contentType: review.contentType,
        revision: trigger.revision,
        captureId,
        leaseToken,
      },
    };
  }

  private load(trigger: EvidenceTrigger) {
    return this.deps.store.load('case', trigger.caseId);
  }

  private async append(
    trigger: EvidenceTrigger,
    commandId: string,
    events: EventDraft[],
    causationId = trigger.eventId,
  ): Promise<void> {
    if (events.length === 0) return;
    await this.deps.store.handle({
      aggregate: 'case',
      aggregateId: trigger.caseId,
      producer: 'evidence',
      commandId,
      causationId,
      correlationId: trigger.eventId,
      occurredAt: this.deps.now().toISOString(),
      consistency: 'producer',
      decide: (current) =>
        current.some((e) => e.producer === 'evidence' && e.commandId === commandId) ? [] : events,
    });
  }
}
