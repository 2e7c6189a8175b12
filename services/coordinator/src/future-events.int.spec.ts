import { CaseView, foldCase } from '@caseloop/case-model';
import { draft, RecordedEvent } from '@caseloop/contracts';
import { listConsumerDeadLetters } from '@caseloop/ledger';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { eventually } from '@caseloop/testing';
import { CaseHandler } from './cases/case.handler';
import { coordinatorConfig, CoordinatorConfig } from './coordinator.config';
import { CoordinatorModule } from './coordinator.module';
import { loadSettings } from './coordinator.settings';
import { IdentityReadModel } from './identity/identity.read-model';
import { loadIdentityReadModel } from './identity/read-model.loader';
import { ClockService } from './scheduling/clock.service';
import {
  CoordinatorHarness,
  coordinatorHarness,
  messageIdOf,
  REVIEWER,
} from './testing/coordinator.test-fixture';

/**
 * A newer producer (a rolling upgrade) writes an event type this release does not know onto a
 * case: the coordinator dead-letters it, passes over it when it loads the case, and the case goes
 * on — to review and to the reviewer's approval — while the clock's re-examination still loads it.
 */
jest.setTimeout(150_000);

const REV = 'a'.repeat(40);
const HEAD = '1'.repeat(40);
const SHA = 'c'.repeat(64);
const REPORT =
  'Since updating to 4.3.0 the Windows desktop app crashes on startup with "Uncaught Exception: Cannot find module keytar". Expected it to open as before. Our whole team is blocked. Screenshot attached.';

let h: CoordinatorHarness;
let svc: RunningService<CoordinatorConfig>;
beforeAll(async () => {
  h = await coordinatorHarness();
  svc = await bootstrapService({
    name: 'coordinator',
    config: coordinatorConfig,
    module: (c) => CoordinatorModule.forRoot(c),
    env: h.env,
  });
});
afterAll(async () => {
  await svc?.close();
  await h?.cleanup();
});

const until = <T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> =>
  eventually(probe, { timeoutMs: 60_000, what }) as Promise<T>;
const ofType = <K extends RecordedEvent['type']>(events: RecordedEvent[], type: K) =>
  events.filter((e): e is RecordedEvent<K> => e.type === type);
const state = async (caseId: string) => foldCase(await h.caseEvents(caseId)) as CaseView;

const check = (name: string, kind: 'lint' | 'focused_test') => ({
  name,
  kind,
  outcome: 'passed' as const,
  revision: REV,
  durationMs: 5,
  exitCode: 0,
  outputSha256: null,
  outputBytes: 0,
});

/** Publishes a well-formed envelope of a type no producer of this release writes. */
async function plantFromTheFuture(caseId: string, n: number): Promise<number> {
  const [valid] = h.ledger.store.build({
    aggregate: 'case',
    aggregateId: caseId,
    producer: 'worker',
    commandId: `newer-worker-${n}`,
    causationId: null,
    correlationId: caseId,
    occurredAt: new Date().toISOString(),
    events: [
      draft('WorktreePrepared', {
        taskId: 'T',
        worktree: 'w',
        branch: 'b',
        baseRevision: REV,
        reused: false,
      }),
    ],
  });
  const ack = await h.ledger.js.publish(
    `${h.namespace}.case.${caseId}.worker`,
    new TextEncoder().encode(JSON.stringify({ ...valid, type: 'ChecksShardedAcrossRunners' })),
  );
  return ack.seq;
}

it('keeps a case with an unknown event type moving to approval; the event is dead-lettered and passed over', async () => {
  const sourceId = `discord-${messageIdOf(71)}`;
  await h.report(71, REPORT);
  const caseId = await until('routed', async () => {
    const r = ofType(await h.sourceEvents(sourceId), 'SourceRouted').at(-1);
    return r?.data.caseId;
  });
  const task = await until('task', async () => ofType(await h.caseEvents(caseId), 'TaskAssigned')[0]);
  const planted = await plantFromTheFuture(caseId, 1);

  const taskId = task.data.taskId;
  await h.append('case', caseId, 'worker', `w-${caseId}`, [
    draft('ChecksCompleted', {
      taskId,
      revision: REV,
      targetHead: HEAD,
      passed: true,
      results: [check('lint', 'lint'), check('unit', 'focused_test')],
    }),
    draft('BranchPushed', {
      taskId,
      branch: `caseloop/${caseId}`,
      revision: REV,
      baseRevision: HEAD,
      created: true,
      draftPullRequestUrl: null,
    }),
  ]);
  await h.append('case', caseId, 'evidence', `ev-${caseId}`, [
    draft('ClientValidationCompleted', {
      taskId,
      revision: REV,
      outcome: 'passed',
      reason: null,
      captureIds: ['cap1'],
    }),
    draft('ArtifactReviewed', {
      artifactId: 'art1',
      kind: 'screenshot',
      sha256: SHA,
      decision: 'cleared',
      redactions: [],
      basis: 'fixture data',
    }),
    draft('ArtifactStored', {
      artifactId: 'art1',
      kind: 'screenshot',
      key: `cases/${caseId}/art1.png`,
      sha256: SHA,
      bytes: 9,
      contentType: 'image/png',
      revision: REV,
      captureId: 'cap1',
      leaseToken: 1,
    }),
  ]);
  // a second one between the proof and the receipt
  const planted2 = await plantFromTheFuture(caseId, 2);
  await h.append('case', caseId, 'evidence', `rc-${caseId}`, [
    draft('ReceiptBuilt', {
      receiptId: 'rcpt-1',
      taskId,
      revision: REV,
      outcome: 'pr_ready',
      checks: [],
      client: { flow: 'search', outcome: 'passed', captureIds: ['cap1'] },
      evidence: [{ key: `cases/${caseId}/art1.png`, sha256: SHA, kind: 'screenshot', shareable: true }],
      residualRisk: 'none known',
      humanAction: 'approve, revise or reject',
      rendered: 'Receipt: PR-ready; unit passed; client flow passed.',
      builtAt: new Date().toISOString(),
    }),
  ]);
  await until('receipt routed', async () =>
    ofType(await h.caseEvents(caseId), 'DeliveryRequested').find((d) => d.data.kind === 'receipt'),
  );
  await h.confirmDeliveries(caseId);
  await until('awaiting review', async () => (await state(caseId)).status === 'awaiting_review');

  await h.append('case', caseId, 'intake', 'cmd-approve-future', [
    draft('ReviewerDecided', {
      reviewerId: REVIEWER,
      messageId: '660000000000000071',
      decision: 'approve',
      text: null,
    }),
  ]);
  await until('approved', async () => (await state(caseId)).status === 'approved');
  const loaded = await h.ledger.store.load('case', caseId);
  expect(loaded.passedOver.map((p) => [p.seq, p.code])).toEqual([
    [planted, 'unknown_event_type'],
    [planted2, 'unknown_event_type'],
  ]);

  // the coordinator's consumer dead-lettered both (the monitor turns each into a finding)
  await until('dead letters', async () => {
    const dls = await listConsumerDeadLetters(h.ledger.jsm, h.stream);
    const seqs = dls.filter((d) => d.code === 'unknown_event_type').map((d) => d.streamSeq);
    return seqs.includes(planted) && seqs.includes(planted2);
  });

  // the clock's re-examination loads every open case, this one with its unknown events included
  await h.report(72, REPORT.replace('Windows desktop', 'Windows 11 desktop'));
  const other = await until('second case routed', async () =>
    ofType(await h.sourceEvents(`discord-${messageIdOf(72)}`), 'SourceRouted').at(-1),
  );
  await plantFromTheFuture(other.data.caseId, 3);
  const settings = loadSettings(svc.config);
  const model = new IdentityReadModel(settings.identity);
  await loadIdentityReadModel(h.ledger, model, 'direct');
  const log = { info: () => undefined, warn: () => undefined };
  const clock = new ClockService(
    h.ledger.store,
    new CaseHandler(h.ledger.store, model, settings, null, log),
    model,
    3_600_000,
    log,
  );
  const tick = await clock.tick();
  expect(tick.reexamined).toBe(model.openCases().length);
  expect(model.openCases()).toContain(other.data.caseId);
});
