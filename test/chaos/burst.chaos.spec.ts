import { ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordedEvent } from '@caseloop/contracts';
import { eventually, freePort } from '@caseloop/testing';
import { connect, headers } from 'nats';
import { BUGS } from '../cluster/reports';
import { LoopWorld, ofType, REPORTS, until } from '../e2e/loop.fixture';

/**
 * The burst of `npm run chaos` (not part of `npm test`: CASELOOP_CHAOS=1 enables its jest project).
 * Reports and duplicates arrive at once (5 bugs, one written three times and one twice, and a piece
 * of feedback: 9 reports, 6 cases); the coordinator is killed as the first report is
 * acknowledged; poison is published straight onto the first case's subjects (a message that is not
 * JSON, and a well-formed event of a type this release does not know); the lease service is killed
 * as soon as a browser lease is requested and held down ~20 s, and meanwhile the nats-server this
 * test started (its own port and store directory) is stopped and started again. In the end every
 * report is recorded once, no case has a second task, no thread a duplicate post, every receipt
 * delivery is confirmed and every case audits clean — except the poisoned one, which still reaches
 * approval but whose audit says it is not clean (exit 3: events this release cannot read).
 */
jest.setTimeout(1_500_000);

/** How long the lease service stays down once killed. */
const LEASE_DOWN_MS = 20_000;

class OwnNats {
  private proc: ChildProcess | null = null;
  constructor(
    readonly port: number,
    readonly storeDir: string,
  ) {}
  get url() {
    return `nats://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    this.proc = spawn(
      'nats-server',
      ['-js', '-sd', this.storeDir, '-a', '127.0.0.1', '-p', String(this.port)],
      {
        stdio: 'ignore',
      },
    );
    await eventually(
      async () => {
        const nc = await connect({ servers: this.url, reconnect: false }).catch(() => null);
        if (!nc) return false;
        await nc.close();
        return true;
      },
      { timeoutMs: 30_000, what: `nats-server on ${this.port}` },
    );
  }
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill(signal);
    await exited;
    this.proc = null;
  }
}

const BURST: { author: 'alice' | 'bob' | 'rita'; text: string; channel?: 'bugs' | 'feedback' }[] = [
  { author: 'alice', text: REPORTS.cartTotal },
  { author: 'bob', text: REPORTS.cartTotalOtherWords },
  {
    author: 'bob',
    text: 'Checkout total is too low when an item has quantity 2: two apples and a cheese show €9.40 instead of €12.90 (Chrome 120, shop 1.4.2). Undercharges every such order; screenshot attached.',
  },
  // four more bugs, each a case of its own, and one reported again word for word by a second person
  ...BUGS.slice(1, 5).map((text) => ({ author: 'alice' as const, text })),
  { author: 'bob', text: BUGS[1]! },
  { author: 'alice', text: REPORTS.feedback, channel: 'feedback' },
];
/** Reports in BURST that belong together: the three cart reports, and the two of BUGS[1]. */
const CART = [0, 1, 2];
const SAME_AGAIN = [3, 7];
const FEEDBACK_AT = 8;
/**
 * The postcode bug shares the cart case's area (checkout), browser and release: a doubtful match the
 * router holds for a human, who settles it as a different problem while the faults go on.
 */
const HELD_AT = 6;

let nats: OwnNats;
let storeDir: string;
let w: LoopWorld;
let failed = true;

beforeAll(async () => {
  storeDir = await mkdtemp(join(tmpdir(), 'caseloop-chaos-nats-'));
  nats = new OwnNats(await freePort(), storeDir);
  await nats.start();
  w = await LoopWorld.start({
    natsUrl: nats.url,
    env: {
      evidence: { EVIDENCE_LEASE_TTL_MS: '15000', EVIDENCE_LEASE_RENEW_WITHIN_MS: '10000' },
      lease: { LEASE_SKEW_MS: '500' },
    },
  });
});
afterAll(async () => {
  if (failed && w) process.stdout.write(`burst failed; service logs:\n${w.logTail()}\n`);
  await w?.stop();
  await nats?.stop();
  await rm(storeDir, { recursive: true, force: true });
});

it("ends with every report recorded once, one task per case, no duplicate post, every receipt confirmed, every audit clean but the poisoned case's", async () => {
  const t0 = Date.now();
  const at = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  const posted = BURST.map((r) => w.report(r.author, r.text, r.channel));
  const first = posted[0]!;
  /** Stream sequences of the poison published onto the first case. */
  const planted: number[] = [];

  /**
   * Publishes, straight onto the case's subjects (no service involved), a body that is not JSON and
   * an event of a type no release knows (a copy of the case's first event under another type).
   */
  const plantPoison = async (caseId: string): Promise<number[]> => {
    const opened = await until('the case opened', 240_000, async () => (await w.events(caseId))[0] ?? null);
    const subject = `${w.stack.namespace}.case.${caseId}.${opened.producer}`;
    const stored = await w.ledger.jsm.streams.getMessage(w.stack.stream, { seq: opened.seq });
    const unknownType = {
      ...(JSON.parse(new TextDecoder().decode(stored.data)) as Record<string, unknown>),
      type: 'CaseFutureThingHappened',
      eventId: `poison-${opened.eventId}`,
      commandId: `poison-${opened.commandId}`,
      data: { note: 'written by a newer release' },
    };
    // the headers a writer of that type would set (no expected sequence: it is not an append)
    const h = headers();
    h.set('Nats-Msg-Id', `poison-${opened.eventId}`);
    h.set('Caseloop-Event-Type', unknownType.type);
    h.set('Caseloop-Event-Version', String(opened.version));
    h.set('Caseloop-Producer', opened.producer);
    const a = await w.ledger.js.publish(subject, new TextEncoder().encode('{"type": "CaseOpe'));
    const b = await w.ledger.js.publish(subject, new TextEncoder().encode(JSON.stringify(unknownType)), {
      headers: h,
    });
    return [a.seq, b.seq];
  };

  const faults = (async () => {
    await until('the first acknowledgement', 240_000, () => w.botPosts(first.id)[0]);
    await w.stack.kill('coordinator', 'SIGKILL');
    await w.stack.restart('coordinator');
    process.stdout.write(`${at()}: coordinator killed and restarted\n`);
    const { caseId } = await w.caseOf(first.id, 240_000);
    planted.push(...(await plantPoison(caseId)));
    process.stdout.write(`${at()}: poison published on case ${caseId} (seq ${planted.join(', ')})\n`);
    await until('a browser lease requested', 600_000, async () =>
      ofType(await w.events(caseId), 'LeaseRequested').length > 0 ? true : null,
    );
    await w.stack.kill('lease', 'SIGKILL');
    const leaseDown = Date.now();
    process.stdout.write(`${at()}: lease service killed\n`);
    await nats.stop();
    process.stdout.write(`${at()}: nats-server stopped\n`);
    await nats.start();
    process.stdout.write(`${at()}: nats-server started again on the same store\n`);
    // the lease service stays down ~20 s (a slow restart): longer than a lease call's own retries
    await new Promise((r) => setTimeout(r, Math.max(0, leaseDown + LEASE_DOWN_MS - Date.now())));
    await w.stack.restart('lease');
    process.stdout.write(`${at()}: lease service restarted after ${Date.now() - leaseDown} ms down\n`);
  })();

  const settled = (async () => {
    const held = posted[HELD_AT]!;
    // Whether the match is doubtful depends on which cases are open when it is routed: held for a
    // reviewer, or a case of its own at once. Never linked to another bug.
    const routed = await until(
      'the postcode report routed',
      300_000,
      async () =>
        ofType(await w.sourceEvents(held.id), 'SourceRouted').find(
          (r) => r.data.outcome === 'held' || r.data.outcome === 'opened' || r.data.outcome === 'linked',
        ) ?? null,
    );
    expect(routed.data.outcome).not.toBe('linked');
    if (routed.data.outcome === 'opened') {
      process.stdout.write(`${at()}: the postcode report opened its own case at once\n`);
      return;
    }
    const review = await until(
      'its link review',
      300_000,
      async () =>
        ofType(await w.events(routed.data.caseId), 'LinkReviewRequested').find(
          (r) => r.data.sourceId === `discord-${held.id}`,
        ) ?? null,
    );
    // the bot asks in the report's thread (which its post opens); the reviewer answers there
    await until(
      'the link review posted in the thread',
      300_000,
      () => w.botPosts(held.id).find((p) => p.content.includes(review.data.reviewId)) ?? null,
    );
    w.reply(held.id, 'rita', `different ${review.data.reviewId}`);
    const own = await until('the held report on a case of its own', 300_000, async () => {
      const r = ofType(await w.sourceEvents(held.id), 'SourceRouted').at(-1);
      return r?.data.outcome === 'opened' ? r : null;
    });
    expect(own.data.caseId).not.toBe(routed.data.caseId);
    process.stdout.write(`${at()}: the held report settled as different: case ${own.data.caseId}\n`);
  })();

  const { caseId } = await w.caseOf(first.id, 300_000);
  await until('awaiting review', 900_000, async () => (await w.view(caseId)).status === 'awaiting_review');
  await faults;
  w.reply(first.id, 'rita', 'approve');
  await until('approved', 300_000, async () => (await w.view(caseId)).status === 'approved');
  process.stdout.write(`${at()}: approved\n`);
  await settled;
  // every other bug's case reaches a reviewer too (one browser client: their proofs take turns)
  const bugCases = new Set<string>();
  for (const [i, m] of posted.entries())
    if (i !== FEEDBACK_AT) bugCases.add((await w.caseOf(m.id, 300_000)).caseId);
  for (const id of bugCases)
    await until(`case ${id} awaiting review`, 900_000, async () =>
      ['awaiting_review', 'approved'].includes((await w.view(id)).status) ? true : null,
    );
  process.stdout.write(`${at()}: all ${bugCases.size} bug cases reached a reviewer\n`);

  for (const [i, m] of posted.entries()) {
    const routings = ofType(await w.sourceEvents(m.id), 'SourceRouted').map(
      (r) =>
        `${r.data.outcome} ${r.data.caseId} at #${r.seq} (confidence ${r.data.confidence}, best ${r.data.matchedWith})`,
    );
    process.stdout.write(`report ${i}: ${routings.join(', ')}\n`);
  }
  // every report recorded exactly once, routed to a case
  const caseIds = new Set<string>();
  for (const m of posted) {
    const events = await w.sourceEvents(m.id);
    expect(ofType(events, 'SourceReceived')).toHaveLength(1);
    caseIds.add((await w.caseOf(m.id, 120_000)).caseId);
  }
  // the three cart reports are one case, the twice-written bug one, every other bug its own, the
  // feedback its own: 5 bugs and the feedback, 6 cases
  for (const i of CART) expect((await w.caseOf(posted[i]!.id)).caseId).toBe(caseId);
  const again = await Promise.all(SAME_AGAIN.map(async (i) => (await w.caseOf(posted[i]!.id)).caseId));
  expect(new Set(again).size).toBe(1);
  expect(bugCases.size).toBe(5);
  expect(caseIds.size).toBe(6);
  expect((await w.caseIds()).sort()).toEqual([...caseIds].sort());
  for (const id of caseIds) {
    const events = await w.events(id);
    expect(ofType(events, 'TaskAssigned').length).toBeLessThanOrEqual(1);
    const receipts = ofType(events, 'DeliveryRequested').filter((d) => d.data.kind === 'receipt');
    const confirmed = new Set(
      ofType(events, 'DeliveryConfirmed').map((d: RecordedEvent<'DeliveryConfirmed'>) => d.data.deliveryId),
    );
    for (const r of receipts) expect(confirmed.has(r.data.deliveryId)).toBe(true);
    const audit = await w.audit(id);
    if (id === caseId) {
      // the poisoned case: approved all the same, but its history is not fully known to this release
      expect(audit.out).toContain('not clean: 2 event(s) this release cannot read');
      for (const seq of planted) expect(audit.out).toContain(`undecodable #${seq} `);
      expect(audit.out).not.toContain('drift');
      expect(audit.code).toBe(3);
    } else {
      expect(audit.out).toContain('clean: the projection equals the fold of the stream');
      expect(audit.code).toBe(0);
    }
  }
  expect(planted).toHaveLength(2);
  // one receipt in every thread that reported a bug
  for (const [i, m] of posted.entries()) if (i !== FEEDBACK_AT) expect(w.receipts(m.id)).toHaveLength(1);
  for (const m of posted) {
    const posts = w.botPosts(m.id).map((p) => p.content);
    expect(posts).toEqual([...new Set(posts)]);
  }
  failed = false;
  process.stdout.write(`burst: report to approval in ${at()}\n`);
});
