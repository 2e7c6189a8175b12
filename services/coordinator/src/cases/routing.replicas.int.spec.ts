import { RecordedEvent } from '@caseloop/contracts';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { eventually } from '@caseloop/testing';
import { coordinatorConfig, CoordinatorConfig } from '../coordinator.config';
import { CoordinatorModule } from '../coordinator.module';
import { CoordinatorHarness, coordinatorHarness, messageIdOf } from '../testing/coordinator.test-fixture';

jest.setTimeout(240_000);

const ofType = <K extends RecordedEvent['type']>(events: RecordedEvent[], type: K) =>
  events.filter((e): e is RecordedEvent<K> => e.type === type);

/** Distinct problems, each reported twice in other words by two people at the same instant. */
const PROBLEMS: Array<[string, string]> = [
  ['invoice emails', 'invoice PDF download returns error 502 on version 7.2.1'],
  ['avatar upload', 'avatar upload rejects PNG files larger than 2 MB with "file type not allowed"'],
  ['dark mode', 'dark mode toggle resets to light after every page reload in Firefox 131'],
  ['csv export', 'CSV export drops the last row of every report with more than 1000 rows'],
  ['password reset', 'password reset link opens a blank page with TypeError: token is undefined'],
  ['calendar sync', 'calendar sync creates each recurring meeting three times on Outlook'],
  ['search filter', 'search filter "assigned to me" also shows tickets assigned to other people'],
  ['push notification', 'push notifications arrive twice on Android 14 for every comment'],
  ['timezone', 'due dates shift one day earlier for users in UTC-5 after saving a task'],
  ['webhook retry', 'webhook retries never stop after a 410 Gone answer from the receiver'],
  ['two-factor login', 'SMS codes for two-factor login expire before they arrive, ERR_OTP_EXPIRED'],
  ['kanban board', 'dragging a card between kanban columns snaps it back to the first lane'],
  ['audio player', 'podcast audio player skips 15 seconds ahead when pressing pause'],
  ['map widget', 'store locator map shows every pin in the Atlantic ocean at 0,0'],
  ['printing', 'printed receipts cut the QR code in half on thermal printers'],
  ['spell checker', 'spell checker underlines every German umlaut word as misspelled'],
  ['billing proration', 'plan upgrade charges the full month instead of the prorated amount'],
  ['keyboard shortcuts', 'Ctrl+K shortcut opens the browser search bar instead of the command palette'],
  ['image gallery', 'gallery thumbnails load rotated 90 degrees for photos taken on iPhone'],
  ['chat mentions', 'typing @ in chat freezes the composer for five seconds'],
  ['SSO login', 'SAML single sign-on loops back to the Okta login page forever'],
  ['data import', 'XLSX import treats the header row as data and creates a contact named Email'],
  ['video calls', 'screen sharing in video calls shows a black rectangle on Wayland'],
  ['offline mode', 'offline edits vanish after reconnecting to wifi on the tablet app'],
  ['pagination', 'page 3 of the order history repeats the orders of page 2'],
  ['accessibility', 'screen reader announces every button on the settings page as "unlabelled"'],
  ['currency display', 'Swiss franc prices render with a dollar sign in the cart summary'],
  ['file sharing', 'shared links to folders answer 403 Forbidden for guests with view access'],
  ['autosave', 'autosave indicator spins forever and drafts stop saving after an hour'],
  ['fonts', 'custom brand font falls back to Times New Roman in exported slides'],
];
/** Problems whose reports arrive together: each round is one burst. */
const PER_ROUND = 10;
const reworded = (what: string, detail: string): [string, string] => [
  `${what}: ${detail}`,
  `seeing this too, ${detail} (${what})`,
];

/**
 * Two coordinator replicas share their consumers. Reports of one problem arrive at the same instant;
 * each replica could route one of them before seeing the other's case. Routing goes one report at a
 * time across replicas (routing.consumer.ts), so every pair ends on one case.
 */
describe('routing across two coordinator replicas', () => {
  let h: CoordinatorHarness;
  const replicas: Array<RunningService<CoordinatorConfig>> = [];

  beforeAll(async () => {
    h = await coordinatorHarness();
    for (let i = 0; i < 2; i++)
      replicas.push(
        await bootstrapService({
          name: 'coordinator',
          config: coordinatorConfig,
          module: (c) => CoordinatorModule.forRoot(c),
          env: h.env,
        }),
      );
  });
  afterAll(async () => {
    for (const r of replicas) await r.close();
    await h?.cleanup();
  });

  it('opens one case per problem when its two reports are routed at once by two replicas', async () => {
    const rounds = PROBLEMS.length / PER_ROUND;
    let n = 100;
    const pairs: Array<[string, string]> = [];
    for (let round = 0; round < rounds; round++) {
      // Every report of the round is appended at once: the replicas pull them concurrently.
      const batch = PROBLEMS.slice(round * PER_ROUND, (round + 1) * PER_ROUND).map(([what, detail]) => {
        const [a, b] = reworded(what, detail);
        const ids: [number, number] = [n++, n++];
        pairs.push(ids.map((k) => `discord-${messageIdOf(k)}`) as [string, string]);
        return [h.report(ids[0], a), h.report(ids[1], b)];
      });
      await Promise.all(batch.flat());
    }
    const routes = new Map<string, RecordedEvent<'SourceRouted'>['data']>();
    await eventually(
      async () => {
        const all = await h.all();
        for (const e of all)
          if (e.type === 'SourceRouted')
            routes.set(e.data.sourceId, (e as RecordedEvent<'SourceRouted'>).data);
        return pairs.every(([a, b]) => routes.has(a) && routes.has(b));
      },
      { timeoutMs: 180_000, intervalMs: 1_000, what: 'every report routed' },
    ).catch(async (e: unknown) => {
      const info = await h.ledger.jsm.consumers.info(h.stream, `${h.env.CONSUMER_NAME}_routing`);
      throw new Error(
        `${(e as Error).message}; ${routes.size} of ${pairs.length * 2} routed; routing consumer: ${JSON.stringify({ pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered, delivered: info.delivered })}`,
      );
    });
    const twoCases = pairs
      .filter(([a, b]) => routes.get(a)?.caseId !== routes.get(b)?.caseId)
      .map(([a, b]) => ({ [a]: routes.get(a), [b]: routes.get(b) }));
    const opened = [...routes.values()].filter((r) => r.outcome === 'opened').length;
    const bothOpened = pairs.filter(
      ([a, b]) => routes.get(a)?.outcome === 'opened' && routes.get(b)?.outcome === 'opened',
    );
    const routedTwice = ofType(await h.all(), 'SourceRouted')
      .map((e) => e.data.sourceId)
      .filter((id, i, all) => all.indexOf(id) !== i);
    const health = await Promise.all(replicas.map(async (r) => (await fetch(`${r.url}/healthz`)).json()));
    process.stdout.write(
      `${pairs.length} pairs routed by ${replicas.length} replicas: ${opened} cases opened, ${bothOpened.length} pairs opened twice, ${twoCases.length} pairs split\n`,
    );
    for (const report of health)
      expect(report).toMatchObject({
        status: 'ready',
        consumers: { [`${h.env.CONSUMER_NAME}_routing`]: 'consuming' },
      });
    expect(routedTwice).toEqual([]);
    expect(bothOpened).toEqual([]);
    expect(twoCases).toEqual([]);
  });
});
