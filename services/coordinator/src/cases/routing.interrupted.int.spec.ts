import { CaseView, foldCase } from '@caseloop/case-model';
import { draft, RecordedEvent } from '@caseloop/contracts';
import { parseConfig } from '@caseloop/platform';
import { coordinatorConfig } from '../coordinator.config';
import { CoordinatorSettings, loadSettings } from '../coordinator.settings';
import { IdentityReadModel } from '../identity/identity.read-model';
import { loadIdentityReadModel } from '../identity/read-model.loader';
import { ClockService } from '../scheduling/clock.service';
import {
  CoordinatorHarness,
  coordinatorHarness,
  messageIdOf,
  proveAndReceipt,
  REVIEWER,
} from '../testing/coordinator.test-fixture';
import { CaseHandler, CaseHandlerHooks } from './case.handler';

jest.setTimeout(120_000);

const FIRST =
  'Since updating to 4.3.0 the Windows desktop app crashes on startup with "Uncaught Exception: Cannot find module keytar". Expected it to open as before. Our whole team is blocked. Screenshot attached.';
const SECOND =
  'Same crash here, Windows 11 desktop app 4.3.0: Cannot find module keytar on startup. Blocks our team too, screenshot attached.';
const sid = (n: number) => `discord-${messageIdOf(n)}`;
const log = { info: () => undefined, warn: () => undefined };
const ofType = <K extends RecordedEvent['type']>(events: RecordedEvent[], type: K) =>
  events.filter((e): e is RecordedEvent<K> => e.type === type);

/** Thrown by a hook: the handler ends right there, as if its process had been killed. */
class Killed extends Error {}

/**
 * A coordinator stopped between its two routing writes — SourceRouted{linked} recorded on the
 * source, nothing yet on the case. The stop is a hook at exactly that point, not a timed kill.
 * No service consumes here: each "process" is a handler with its own read model.
 */
describe('a routing interrupted between the source and the case', () => {
  // One namespace per story, so each second report can only match its own first one.
  let h: CoordinatorHarness;
  let settings: CoordinatorSettings;
  const harnesses: CoordinatorHarness[] = [];
  async function fresh(): Promise<void> {
    h = await coordinatorHarness();
    harnesses.push(h);
    settings = loadSettings(parseConfig(coordinatorConfig, h.env));
  }
  afterAll(async () => {
    for (const x of harnesses) await x.cleanup();
  });

  /** A fresh process: its read model rebuilt from the ledger, as at start. */
  async function restarted(hooks: CaseHandlerHooks = {}) {
    const model = new IdentityReadModel(settings.identity, settings.privateMarkers);
    const handler = new CaseHandler(h.ledger.store, model, settings, null, log, undefined, null, hooks);
    handler.waitFor(loadIdentityReadModel(h.ledger, model));
    return { model, handler };
  }
  const caseState = async (caseId: string) => foldCase(await h.caseEvents(caseId)) as CaseView;
  const lastRouted = async (sourceId: string) =>
    ofType(await h.sourceEvents(sourceId), 'SourceRouted').at(-1)?.data;

  /** Opens the first case, then kills the handler routing the second report right after SourceRouted. */
  async function interruptedLink(first: number, second: number) {
    await fresh();
    const a = await restarted();
    await a.handler.onSourceReceived(await h.report(first, FIRST));
    const opened = (await lastRouted(sid(first)))!;
    expect(opened.outcome).toBe('opened');
    const b = await restarted({
      routeRecorded: (r) => {
        if (r.sourceId === sid(second)) throw new Killed(`stopped after routing ${r.sourceId}`);
      },
    });
    await expect(b.handler.onSourceReceived(await h.report(second, SECOND))).rejects.toBeInstanceOf(Killed);
    expect(await lastRouted(sid(second))).toMatchObject({ outcome: 'linked', caseId: opened.caseId });
    expect(ofType(await h.caseEvents(opened.caseId), 'SourceLinked')).toEqual([]);
    return opened.caseId;
  }

  it('does not let the case reach review without the routed report, and the restart puts it on the case', async () => {
    const caseId = await interruptedLink(1, 2);
    const taskId = (await caseState(caseId)).taskId as string;

    // The case goes on without the second report: proven, receipted, the first thread confirmed.
    const survivor = await restarted();
    await proveAndReceipt(h, caseId, taskId, '1'.repeat(40));
    const receipt = ofType(await h.caseEvents(caseId), 'ReceiptBuilt')[0]!;
    await survivor.handler.onCaseEvent(receipt);
    await h.confirmDeliveries(caseId);
    const confirmed = ofType(await h.caseEvents(caseId), 'DeliveryConfirmed').at(-1)!;
    // The gate counts the routed source: one thread confirmed out of two routed reports is not enough.
    expect(survivor.model.unfinishedRoutes(caseId)).toEqual([sid(2)]);
    await survivor.handler.onCaseEvent(confirmed);
    expect((await caseState(caseId)).status).not.toBe('awaiting_review');
    expect(ofType(await h.caseEvents(caseId), 'CaseAwaitingReview')).toEqual([]);

    // A reviewer cannot approve it meanwhile.
    await h.append('case', caseId, 'intake', 'cmd-early-approve', [
      draft('ReviewerDecided', {
        reviewerId: REVIEWER,
        messageId: '660000000000000101',
        decision: 'approve',
        text: null,
      }),
    ]);
    await survivor.handler.onCaseEvent(ofType(await h.caseEvents(caseId), 'ReviewerDecided')[0]!);
    expect((await caseState(caseId)).status).not.toBe('approved');

    // The next start finishes the routing from what the ledger recorded, without any redelivery.
    const next = await restarted();
    expect(await next.handler.finishUnfinishedRoutes()).toBe(1);
    const linked = ofType(await h.caseEvents(caseId), 'SourceLinked');
    expect(linked.map((x) => x.data.sourceId)).toEqual([sid(2)]);
    expect(next.model.unfinishedRoutes()).toEqual([]);
    // It joined after the receipt was routed: it is told it joined and is caught up on the receipt.
    const toSecond = ofType(await h.caseEvents(caseId), 'DeliveryRequested').filter(
      (d) => d.data.sourceId === sid(2),
    );
    expect(toSecond.map((d) => d.data.kind).sort()).toEqual(['linked', 'receipt']);
    await h.confirmDeliveries(caseId);
    await next.handler.onCaseEvent(ofType(await h.caseEvents(caseId), 'DeliveryConfirmed').at(-1)!);
    expect((await caseState(caseId)).status).toBe('awaiting_review');
    expect(ofType(await h.caseEvents(caseId), 'CaseAwaitingReview')[0]?.data.confirmedSources.sort()).toEqual(
      [sid(1), sid(2)].sort(),
    );

    // The report's late redelivery changes nothing: still one case, one link.
    const received = ofType(await h.sourceEvents(sid(2)), 'SourceReceived')[0]!;
    await next.handler.onSourceReceived(received);
    expect(ofType(await h.sourceEvents(sid(2)), 'SourceRouted')).toHaveLength(1);
    expect(ofType(await h.caseEvents(caseId), 'SourceLinked')).toHaveLength(1);
    expect(ofType(await h.all(), 'CaseOpened')).toHaveLength(1);
  });

  it('is finished by the process that sees the routing recorded, and by the clock', async () => {
    const viaEvent = await interruptedLink(3, 4);
    const viaEventStore = h;
    const watcher = await restarted();
    const routedEvent = ofType(await h.sourceEvents(sid(4)), 'SourceRouted')[0]!;
    await watcher.handler.onCaseEvent(routedEvent);
    expect(ofType(await h.caseEvents(viaEvent), 'SourceLinked').map((x) => x.data.sourceId)).toEqual([
      sid(4),
    ]);
    // Seeing it again is harmless.
    await watcher.handler.onCaseEvent(routedEvent);
    expect(ofType(await h.caseEvents(viaEvent), 'SourceLinked')).toHaveLength(1);

    const viaClock = await interruptedLink(5, 6);
    const clocked = await restarted();
    // The clock starts once the read model is rebuilt, as in the service.
    await loadIdentityReadModel(h.ledger, clocked.model);
    const tick = await new ClockService(
      h.ledger.store,
      clocked.handler,
      clocked.model,
      3_600_000,
      log,
    ).tick();
    expect(tick.reexamined).toBe(1);
    expect(ofType(await h.caseEvents(viaClock), 'SourceLinked').map((x) => x.data.sourceId)).toEqual([
      sid(6),
    ]);
    expect(ofType(await viaEventStore.all(), 'CaseOpened')).toHaveLength(1);
    expect(ofType(await h.all(), 'CaseOpened')).toHaveLength(1);
  });
});
