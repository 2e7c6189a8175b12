import { eventually } from '@caseloop/testing';
import { IntakeHarness, StartedIntake } from '../../test/intake.fixture';
import { discordMessagePayload, toInbound } from './inbound-message';

jest.setTimeout(180_000);

const EYES = '👀';

describe('intake recovery: restarts, the delta, gateway drops, crashes between steps', () => {
  let h: IntakeHarness;

  beforeAll(async () => {
    h = await IntakeHarness.create({ limits: { reportsPerDayPerUser: 10_000 } });
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  const recorded = (id: string, n = 2) =>
    eventually(async () => (await h.sourceEvents(id)).length === n, {
      what: `source ${id} has ${n} events`,
      timeoutMs: 30_000,
    });
  const rawOf = (channelId: string, id: string) => {
    const raw = h.discord.rawMessages(channelId).find((m) => (m as { id: string }).id === id);
    return toInbound(discordMessagePayload.parse(raw));
  };

  it('a message replayed after a restart, and the same message seen by the delta, are one source', async () => {
    let intake: StartedIntake = await h.start();
    const live = h.discord.say({ authorId: h.ids.alice, channelId: h.ids.bugs, content: 'orders page 500s' });
    await recorded(live.id);
    await intake.stop();

    // Missed while intake was down.
    const missed = h.discord.say({
      authorId: h.ids.bob,
      channelId: h.ids.bugs,
      content: 'invoice PDF is blank',
    });
    const missedInThread = h.discord.startThread({ messageId: missed.id, name: 'pdf' });
    const threadReply = h.discord.say({
      authorId: h.ids.bob,
      threadId: missedInThread.id,
      content: 'only for EUR invoices',
    });

    intake = await h.start();
    await recorded(missed.id);
    await recorded(threadReply.id);
    expect((await h.sourceEvents(missed.id))[0]).toMatchObject({
      type: 'SourceReceived',
      data: { via: 'delta' },
    });
    expect((await h.sourceEvents(threadReply.id))[0]).toMatchObject({
      type: 'SourceReceived',
      data: { via: 'delta', place: { threadId: missedInThread.id } },
    });

    // The gateway replays the first message; a clock tick's delta reaches back over it too.
    expect(await intake.runtime.recorder.ingest(rawOf(h.ids.bugs, live.id), 'gateway')).toBe(
      'already_recorded',
    );
    intake.runtime.delta.retryLater(h.ids.bugs, live.id);
    const report = await intake.runtime.fetchDelta('tick-1', null);
    expect(report.channels.find((c) => c.channelId === h.ids.bugs)?.fetched).toBeGreaterThanOrEqual(2);
    for (const id of [live.id, missed.id]) {
      const ev = await h.sourceEvents(id);
      expect(ev.map((e) => e.type)).toEqual(['SourceReceived', 'ReadReceiptAdded']);
    }
    expect(h.discord.reactions(live.id)).toEqual([expect.objectContaining({ emoji: EYES, count: 1 })]);
    const deltas = (await h.events()).filter((e) => e.type === 'DeltaFetched');
    expect(deltas.some((e) => e.aggregate === 'ops' && e.aggregateId === 'tick-1')).toBe(true);
    await intake.stop();
  });

  it('pages the delta correctly over more than one full page', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 230; i++)
      ids.push(
        h.discord.say({
          authorId: h.ids.alice,
          channelId: h.ids.feedback,
          content: `idea ${i}`,
          mentionsBot: true,
        }).id,
      );
    const intake = await h.start({ deltaPageSize: 100 });
    await eventually(
      async () => {
        for (const id of [ids[0], ids[99], ids[100], ids[229]] as string[])
          if ((await h.sourceEvents(id)).length !== 2) return false;
        return true;
      },
      { what: 'all pages recorded', timeoutMs: 60_000 },
    );
    const pages = h.discord.requests.filter(
      (r) => r.method === 'GET' && r.path === `/channels/${h.ids.feedback}/messages`,
    );
    expect(pages.length).toBeGreaterThanOrEqual(3);
    const fetched = (await h.events()).filter(
      (e) => e.type === 'DeltaFetched' && e.data.channelId === h.ids.feedback,
    );
    expect(fetched.at(-1)?.data).toMatchObject({ fetched: 230, recorded: 230, lastSeenId: ids[229] });
    await intake.stop();
  });

  it('a gateway dropped mid-burst resumes and nothing is lost', async () => {
    const intake = await h.start();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      if (i === 15) h.discord.dropGateway();
      ids.push(h.discord.say({ authorId: h.ids.alice, channelId: h.ids.bugs, content: `burst ${i}` }).id);
    }
    await eventually(
      async () => {
        for (const id of ids) if ((await h.sourceEvents(id)).length !== 2) return false;
        return true;
      },
      { what: 'burst recorded', timeoutMs: 60_000 },
    );
    expect(h.discord.resumeCount).toBeGreaterThanOrEqual(1);
    expect(ids.every((id) => h.discord.reactions(id).length === 1)).toBe(true);
    expect(await intake.registry.getSingleMetricAsString('caseloop_intake_gateway_reconnects_total')).toMatch(
      / [1-9]\d*$/m,
    );
    await intake.stop();
  });

  it('killed between the ledger append and the reaction: on restart no second source, the reaction is added', async () => {
    const intake = await h.start();
    // The reaction never reaches Discord: every attempt (discord.js retries 5xx) fails before it is stored.
    const fault = h.discord.inject({
      method: 'PUT',
      path: /\/reactions\//,
      status: 500,
      when: 'before',
      times: 100,
    });
    const m = h.discord.say({
      authorId: h.ids.alice,
      channelId: h.ids.bugs,
      content: 'settings page forgets the timezone',
    });
    await recorded(m.id, 1);
    await eventually(() => h.logLines.some((l) => l.includes('read receipt not added')), {
      what: 'receipt failure logged',
      timeoutMs: 60_000,
    });
    await intake.stop();
    fault.cancel();
    expect(h.discord.reactions(m.id)).toEqual([]);

    const again = await h.start();
    await recorded(m.id, 2);
    expect((await h.sourceEvents(m.id)).map((e) => e.type)).toEqual(['SourceReceived', 'ReadReceiptAdded']);
    expect(h.discord.reactions(m.id)).toEqual([expect.objectContaining({ emoji: EYES, count: 1, me: true })]);
    await again.stop();
  });

  it('delivery interrupted between the intent and the POST: reconciled on restart, exactly one post', async () => {
    const intake = await h.start();
    const m = h.discord.say({
      authorId: h.ids.alice,
      channelId: h.ids.bugs,
      content: 'password reset mail never arrives',
    });
    await recorded(m.id);
    // Every POST attempt fails before Discord stores anything: the intent is journaled, the post never made.
    const fault = h.discord.inject({
      method: 'POST',
      path: `/channels/${m.id}/messages`,
      status: 503,
      when: 'before',
      times: 100,
    });
    const req = await h.requestDelivery({
      caseId: 'C01RECON1',
      deliveryId: 'D01',
      message: m,
      content: 'We are on it.',
    });
    await expect(intake.runtime.onDeliveryRequested(req)).rejects.toThrow(/delivery D01 chunk 0/);
    expect((await h.caseEvents('C01RECON1')).map((e) => e.type)).toEqual([
      'DeliveryRequested',
      'DeliveryIntended',
    ]);
    await intake.stop();
    fault.cancel();

    const again = await h.start();
    const posts = () => h.botPosts(m.id);
    await eventually(() => posts().length === 1, { what: 'one post after reconciliation' });
    const ev = await h.caseEvents('C01RECON1');
    expect(ev.map((e) => e.type)).toEqual(['DeliveryRequested', 'DeliveryIntended', 'DeliveryConfirmed']);
    expect(ev[2]?.data).toMatchObject({ reconciled: true, discordMessageId: posts()[0]?.id });
    await again.stop();
  });

  it('a POST whose answer was lost after Discord stored it is found on restart (no nonce on a re-fetched message: author, thread, fingerprint, window), not posted again', async () => {
    const intake = await h.start();
    const m = h.discord.say({
      authorId: h.ids.alice,
      channelId: h.ids.bugs,
      content: 'map tiles load slowly',
    });
    await recorded(m.id);
    const fault = h.discord.inject({
      method: 'POST',
      path: `/channels/${m.id}/messages`,
      status: 502,
      when: 'after',
      times: 100,
    });
    const req = await h.requestDelivery({
      caseId: 'C01RECON2',
      deliveryId: 'D02',
      message: m,
      content: 'Recorded.',
    });
    await expect(intake.runtime.onDeliveryRequested(req)).rejects.toThrow();
    await intake.stop();
    fault.cancel();
    const postsBefore = h.discord.requests.filter(
      (r) => r.method === 'POST' && r.path === `/channels/${m.id}/messages`,
    ).length;

    const again = await h.start();
    await eventually(
      async () => (await h.caseEvents('C01RECON2')).some((e) => e.type === 'DeliveryConfirmed'),
      { what: 'confirmed' },
    );
    expect(h.botPosts(m.id)).toHaveLength(1);
    expect(
      h.discord.requests.filter((r) => r.method === 'POST' && r.path === `/channels/${m.id}/messages`).length,
    ).toBe(postsBefore);
    await again.stop();
  });

  it('an unresolved intent older than the dedupe window is refused, never re-posted', async () => {
    const intake = await h.start();
    const m = h.discord.say({
      authorId: h.ids.alice,
      channelId: h.ids.bugs,
      content: 'profile photo rotates',
    });
    await recorded(m.id);
    const fault = h.discord.inject({
      method: 'POST',
      path: `/channels/${m.id}/messages`,
      status: 503,
      when: 'before',
      times: 100,
    });
    const req = await h.requestDelivery({
      caseId: 'C01RECON3',
      deliveryId: 'D03',
      message: m,
      content: 'Recorded.\n\nSecond part.'.replace('Second part.', 'x'.repeat(1990)),
    });
    await expect(intake.runtime.onDeliveryRequested(req)).rejects.toThrow();
    await intake.stop();
    fault.cancel();

    const later = await h.start({ now: () => new Date(Date.now() + 10 * 60_000) });
    await eventually(
      async () => (await h.caseEvents('C01RECON3')).filter((e) => e.type === 'DeliveryRefused').length === 2,
      { what: 'refused' },
    );
    const refused = (await h.caseEvents('C01RECON3'))
      .filter((e) => e.type === 'DeliveryRefused')
      .map((e) => (e.type === 'DeliveryRefused' ? e.data.reason : ''));
    expect(refused).toEqual(['ambiguous_outside_window', 'previous_chunk_unconfirmed']);
    expect(h.botPosts(m.id)).toHaveLength(0);
    await later.stop();
  });

  it('a graceful stop finishes the delivery in progress before closing', async () => {
    const intake = await h.start();
    const m = h.discord.say({ authorId: h.ids.alice, channelId: h.ids.bugs, content: 'the help link 404s' });
    await recorded(m.id);
    h.discord.inject({ method: 'POST', path: `/channels/${m.id}/messages`, delayMs: 1_500, times: 1 });
    const req = await h.requestDelivery({
      caseId: 'C01GRACE',
      deliveryId: 'D01',
      message: m,
      content: 'Recorded.',
    });
    const delivering = intake.runtime.onDeliveryRequested(req);
    await eventually(
      async () => (await h.caseEvents('C01GRACE')).some((e) => e.type === 'DeliveryIntended'),
      { what: 'intent journaled' },
    );
    await intake.stop();
    await delivering;
    expect((await h.caseEvents('C01GRACE')).map((e) => e.type)).toEqual([
      'DeliveryRequested',
      'DeliveryIntended',
      'DeliveryConfirmed',
    ]);
    expect(h.botPosts(m.id)).toHaveLength(1);
    await expect(intake.runtime.onDeliveryRequested(req)).rejects.toThrow(/shutting down/);
  });
});
