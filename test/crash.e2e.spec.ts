import { SERVICE_NAMES as ALL_SERVICES } from '@caseloop/stack';
import { CRASH_POINTS as POINTS } from './e2e/crash-points';
import { LoopWorld, ofType, REPORTS, seededRandom, until } from './e2e/loop.fixture';

jest.setTimeout(600_000);

/**
 * Which service dies where: `CASELOOP_CRASH_SERVICE` and `CASELOOP_CRASH_POINT` name it (the chaos
 * run, `npm run chaos`, goes through all of them); else `CASELOOP_E2E_SEED` picks both with a
 * seeded random (reproducing a printed seed); else — a plain `npm test` — the day picks one of the
 * combinations in turn, so CI covers every service × point over as many days.
 */
/** The services of the loop; the console only reads, so killing it changes nothing the test can see. */
const SERVICE_NAMES = ALL_SERVICES.filter((s) => s !== 'console');

function scenario(): {
  seed: number;
  service: (typeof SERVICE_NAMES)[number];
  point: (typeof POINTS)[number];
} {
  const named = process.env.CASELOOP_CRASH_SERVICE;
  const seedEnv = process.env.CASELOOP_E2E_SEED;
  const seed = Number(seedEnv ?? Date.now() % 1_000_000);
  if (named) {
    const service = SERVICE_NAMES.find((s) => s === named);
    const point = POINTS.find((p) => p.name === process.env.CASELOOP_CRASH_POINT);
    if (!service || !point)
      throw new Error(
        `CASELOOP_CRASH_SERVICE is one of ${SERVICE_NAMES.join(', ')} and CASELOOP_CRASH_POINT one of ${POINTS.map((p) => `"${p.name}"`).join(', ')}`,
      );
    return { seed, service, point };
  }
  if (seedEnv !== undefined) {
    const random = seededRandom(seed);
    const service = SERVICE_NAMES[
      Math.floor(random() * SERVICE_NAMES.length)
    ] as (typeof SERVICE_NAMES)[number];
    return { seed, service, point: POINTS[Math.floor(random() * POINTS.length)] as (typeof POINTS)[number] };
  }
  const day = Math.floor(Date.now() / 86_400_000);
  const i = day % (SERVICE_NAMES.length * POINTS.length);
  return {
    seed,
    service: SERVICE_NAMES[Math.floor(i / POINTS.length)] as (typeof SERVICE_NAMES)[number],
    point: POINTS[i % POINTS.length] as (typeof POINTS)[number],
  };
}

/**
 * One service is SIGKILLed at a point of the loop (see `scenario`), then restarted. The end state
 * must be the one an uninterrupted run reaches. Reproduce a failure with the printed variables.
 */
describe('a service killed mid-loop', () => {
  const { seed, service, point } = scenario();
  let w: LoopWorld;
  let failed = true;

  beforeAll(async () => {
    process.stdout.write(
      `crash scenario: seed ${seed}: SIGKILL ${service} at "${point.name}" (CASELOOP_CRASH_SERVICE=${service} CASELOOP_CRASH_POINT="${point.name}" reproduces it)\n`,
    );
    w = await LoopWorld.start({
      // A lease held by the killed evidence service lapses soon enough for its successor.
      env: {
        evidence: { EVIDENCE_LEASE_TTL_MS: '15000', EVIDENCE_LEASE_RENEW_WITHIN_MS: '10000' },
        lease: { LEASE_SKEW_MS: '500' },
      },
    });
  });
  afterAll(async () => {
    if (failed && w)
      process.stdout.write(`crash scenario seed ${seed} failed; service logs:\n${w.logTail()}\n`);
    await w?.stop();
  });

  it(`reaches the same end state: one case, one task, one receipt per thread, no duplicate post, no drift`, async () => {
    const t0 = Date.now();
    const ctx: { reportId: string; caseId: string | null } = { reportId: '', caseId: null };
    let killedAt: number | null = null;
    const first = w.report('alice', REPORTS.cartTotal);
    ctx.reportId = first.id;

    const killer = (async () => {
      await until(`"${point.name}"`, 300_000, async () => {
        if (!ctx.caseId) {
          const routed = ofType(await w.sourceEvents(first.id), 'SourceRouted').at(-1);
          if (routed) ctx.caseId = routed.data.caseId;
        }
        const events = ctx.caseId ? await w.events(ctx.caseId) : [];
        return point.reached(w, ctx, events);
      });
      const exit = await w.stack.kill(service, 'SIGKILL');
      killedAt = Date.now() - t0;
      expect(exit.signal).toBe('SIGKILL');
      await w.stack.restart(service);
      process.stdout.write(
        `${service} killed at ${killedAt} ms ("${point.name}") and back after ${Date.now() - t0 - killedAt} ms\n`,
      );
    })();

    await until('the acknowledgement', 240_000, () => w.botPosts(first.id)[0]);
    const { caseId } = await w.caseOf(first.id, 240_000);
    const second = w.report('bob', REPORTS.cartTotalOtherWords);
    expect(await w.caseOf(second.id, 240_000)).toEqual({ caseId, outcome: 'linked' });
    await until('awaiting review', 420_000, async () => (await w.view(caseId)).status === 'awaiting_review');
    await killer;
    w.reply(first.id, 'rita', 'approve');
    await until('approved', 180_000, async () => (await w.view(caseId)).status === 'approved');
    await until('the approval answered', 120_000, () =>
      w.botPosts(first.id).find((m) => m.content.includes('was approved')),
    );

    const events = await w.events(caseId);
    expect(await w.caseIds()).toEqual([caseId]);
    expect(ofType(events, 'TaskAssigned')).toHaveLength(1);
    expect(new Set(ofType(events, 'ReceiptBuilt').map((r) => r.data.receiptId)).size).toBe(1);
    for (const reportId of [first.id, second.id]) {
      expect(w.receipts(reportId)).toHaveLength(1);
      const posts = w.botPosts(reportId).map((m) => m.content);
      expect(posts).toEqual([...new Set(posts)]);
    }
    expect(w.reactions(first.id)).toEqual(['👀']);
    const revision = ofType(events, 'ChecksCompleted').at(-1)?.data.revision;
    expect(await w.stack.remote.head(`caseloop/${caseId}`)).toBe(revision);
    const audit = await w.audit(caseId);
    expect(audit.out).toContain('clean');
    expect(audit.code).toBe(0);
    failed = false;
    process.stdout.write(
      `scenario 5 (seed ${seed}, ${service} at "${point.name}"): report to approval in ${Date.now() - t0} ms\n`,
    );
  });
});
