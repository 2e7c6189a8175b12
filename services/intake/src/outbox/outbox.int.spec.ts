import { eventually } from '@caseloop/testing';
import { IntakeHarness, StartedIntake } from '../../test/intake.fixture';

jest.setTimeout(120_000);

describe('the delivery outbox and reviewer commands against the local Discord', () => {
  let h: IntakeHarness;
  let intake: StartedIntake;

  beforeAll(async () => {
    h = await IntakeHarness.create();
    intake = await h.start();
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  const report = async (content: string, authorId = h.ids.alice) => {
    const m = h.discord.say({ authorId, channelId: h.ids.bugs, content });
    await eventually(async () => (await h.sourceEvents(m.id)).length === 2, {
      what: 'source and receipt',
      timeoutMs: 20_000,
    });
    return m;
  };
  const botPosts = (threadId: string) => h.botPosts(threadId);

  it('opens the case thread on the first reply, splits on paragraphs, nonce-enforced, mentions off, first chunk replying', async () => {
    const m = await report('the cart total is wrong when quantity > 1');
    const paragraphs = Array.from({ length: 5 }, (_, i) => `${String.fromCharCode(97 + i).repeat(900)}`);
    const req = await h.requestDelivery({
      caseId: 'C01OUTBOX1',
      deliveryId: 'D01ACK',
      message: m,
      content: paragraphs.join('\n\n') + `\n\n<@${h.ids.alice}> thanks`,
    });
    await intake.runtime.onDeliveryRequested(req);

    const thread = h.discord.threads().find((t) => t.id === m.id);
    expect(thread).toMatchObject({ parentId: h.ids.bugs, ownerId: h.discord.botId });
    const posts = botPosts(m.id);
    expect(posts.map((p) => p.content.length)).toEqual([
      1802,
      1802,
      900 + 2 + `<@${h.ids.alice}> thanks`.length,
    ]);
    expect(posts.every((p) => typeof p.nonce === 'string' && (p.nonce as string).length <= 25)).toBe(true);
    expect(posts[2]?.mentions).toEqual([]);
    const bodies = h.discord.requests
      .filter((r) => r.method === 'POST' && r.path === `/channels/${m.id}/messages`)
      .map((r) => r.body as Record<string, unknown>);
    expect(bodies).toHaveLength(3);
    for (const b of bodies) expect(b).toMatchObject({ enforce_nonce: true, allowed_mentions: { parse: [] } });
    expect(bodies[0]?.message_reference).toMatchObject({ message_id: m.id });
    expect(bodies[1]?.message_reference).toBeUndefined();

    const types = (await h.caseEvents('C01OUTBOX1'))
      .filter((e) => e.aggregate === 'case' && e.producer === 'intake')
      .map((e) => `${e.type}:${(e.data as { chunkIndex: number }).chunkIndex}`);
    expect(types).toEqual([
      'DeliveryIntended:0',
      'DeliveryConfirmed:0',
      'DeliveryIntended:1',
      'DeliveryConfirmed:1',
      'DeliveryIntended:2',
      'DeliveryConfirmed:2',
    ]);

    // Redelivered by the transport: nothing new is posted or recorded.
    await intake.runtime.onDeliveryRequested(req);
    expect(botPosts(m.id)).toHaveLength(3);
    expect((await h.caseEvents('C01OUTBOX1')).length).toBe(7);
  });

  it('records the system messages of a new thread (18 in the channel, 21 in the thread) as dropped, never as a report, and answers none', async () => {
    const m = await report('search results are empty');
    const req = await h.requestDelivery({
      caseId: 'C01OUTBOXSYS',
      deliveryId: 'D01SYS',
      message: m,
      content: 'Recorded as a case.',
    });
    await intake.runtime.onDeliveryRequested(req);
    // A listed reporter starting a thread herself: the THREAD_CREATED carries her thread's name.
    const own = await report('filters reset on reload');
    h.discord.startThread({
      messageId: own.id,
      name: 'filters reset on reload, again',
      authorId: h.ids.alice,
    });

    const system = [
      ...h.discord.messages(h.ids.bugs),
      ...h.discord.messages(m.id),
      ...h.discord.messages(own.id),
    ]
      .filter((x) => BigInt(x.id) > BigInt(m.id))
      .filter((x) => x.type === 18 || x.type === 21);
    expect(system.map((x) => x.type).sort()).toEqual([18, 18, 21, 21]);
    for (const x of system) {
      const events = await eventually(
        async () => {
          const ev = await h.sourceEvents(x.id);
          return ev.length > 0 ? ev : null;
        },
        { what: `system message ${x.id} seen` },
      );
      expect(events?.map((e) => e.type)).toEqual(['SourceDropped']);
      expect(events?.[0]?.data).toMatchObject({ reason: 'system_message', notice: false });
    }
    // Nothing answers them: the case thread holds the one reply, the reporter's thread none.
    expect(botPosts(m.id).map((p) => p.content)).toEqual(['Recorded as a case.']);
    expect(botPosts(own.id)).toEqual([]);
    expect(h.discord.messages(h.ids.bugs).some((x) => system.some((y) => x.replyTo === y.id))).toBe(false);
  });

  it('a 502 after Discord stored the message gives exactly one message (same nonce on the retry)', async () => {
    const m = await report('search returns nothing for accented names');
    h.discord.inject({
      method: 'POST',
      path: `/channels/${m.id}/messages`,
      status: 502,
      when: 'after',
      times: 1,
    });
    const req = await h.requestDelivery({
      caseId: 'C01OUTBOX2',
      deliveryId: 'D02ACK',
      message: m,
      content: 'Recorded as a case.',
    });
    await intake.runtime.onDeliveryRequested(req);
    const posts = h.discord.requests.filter(
      (r) => r.method === 'POST' && r.path === `/channels/${m.id}/messages`,
    );
    expect(posts.map((p) => p.status)).toEqual([502, 200]);
    expect(botPosts(m.id)).toHaveLength(1);
    expect((await h.caseEvents('C01OUTBOX2')).map((e) => e.type)).toEqual([
      'DeliveryRequested',
      'DeliveryIntended',
      'DeliveryConfirmed',
    ]);
  });

  it('honours a 429 Retry-After before posting again', async () => {
    const m = await report('avatar upload spins forever');
    h.discord.inject({
      method: 'POST',
      path: `/channels/${m.id}/messages`,
      status: 429,
      retryAfterMs: 1500,
      times: 1,
    });
    const req = await h.requestDelivery({
      caseId: 'C01OUTBOX3',
      deliveryId: 'D03ACK',
      message: m,
      content: 'Recorded as a case.',
    });
    await intake.runtime.onDeliveryRequested(req);
    const posts = h.discord.requests.filter(
      (r) => r.method === 'POST' && r.path === `/channels/${m.id}/messages`,
    );
    expect(posts.map((p) => p.status)).toEqual([429, 200]);
    expect((posts[1]?.at ?? 0) - (posts[0]?.at ?? 0)).toBeGreaterThanOrEqual(1400);
    expect(botPosts(m.id)).toHaveLength(1);
  });

  it('a Discord refusal (4xx) is recorded as refused and stops the remaining chunks', async () => {
    const m = await report('dark mode colours are off');
    const req = await h.requestDelivery({
      caseId: 'C01OUTBOX4',
      deliveryId: 'D04',
      message: { id: m.id, channelId: h.ids.general },
      threadId: '1234567890123456789',
      content: `${'a'.repeat(1500)}\n\n${'b'.repeat(1500)}`,
    });
    await intake.runtime.onDeliveryRequested(req);
    const outcomes = (await h.caseEvents('C01OUTBOX4'))
      .filter((e) => e.type === 'DeliveryRefused')
      .map((e) => (e.type === 'DeliveryRefused' ? [e.data.chunkIndex, e.data.reason] : []));
    expect(outcomes).toEqual([
      [0, 'channel_gone'],
      [1, 'previous_chunk_unconfirmed'],
    ]);
  });

  describe('in a case thread', () => {
    let source: { id: string };
    beforeAll(async () => {
      source = await report('export to CSV drops the last row');
      await intake.runtime.onDeliveryRequested(
        await h.requestDelivery({
          caseId: 'C01CMD',
          deliveryId: 'D05ACK',
          message: source as { id: string; channelId: string },
          content: 'Recorded.',
        }),
      );
    });

    it('takes a reporter reply in the thread as intake, without a mention and without counting a new report', async () => {
      const reply = h.discord.say({
        authorId: h.ids.alice,
        threadId: source.id,
        content: 'it happens on Firefox too',
      });
      await eventually(async () => (await h.sourceEvents(reply.id)).length === 2, {
        what: 'thread reply recorded',
      });
      const [received] = await h.sourceEvents(reply.id);
      expect(received).toMatchObject({
        type: 'SourceReceived',
        data: { place: { channelId: h.ids.bugs, threadId: source.id } },
      });
    });

    it('takes a thread renamed "approve" by a reviewer as the system message it is, not as a decision', async () => {
      // A reviewer who moderates the channel renames the case thread: Discord posts CHANNEL_NAME_CHANGE
      // (type 4) in it, authored by her, its content the new name.
      h.discord.setPermissionOverwrite(h.ids.bugs, { userId: h.ids.rita, allow: ['MANAGE_THREADS'] });
      h.discord.renameThread({ threadId: source.id, name: 'approve', authorId: h.ids.rita });
      const notice = h.discord.messages(source.id).find((x) => x.type === 4);
      expect(notice).toMatchObject({ content: 'approve', author: { id: h.ids.rita } });
      const events = await eventually(
        async () => {
          const ev = await h.sourceEvents(notice!.id);
          return ev.length > 0 ? ev : null;
        },
        { what: 'rename notice seen' },
      );
      expect(events?.map((e) => e.type)).toEqual(['SourceDropped']);
      expect(events?.[0]?.data).toMatchObject({ reason: 'system_message', notice: false });
      expect((await h.caseEvents('C01CMD')).some((e) => e.type === 'ReviewerDecided')).toBe(false);
      h.discord.deletePermissionOverwrite(h.ids.bugs, h.ids.rita);
    });

    it('refuses an approval from someone who is not a reviewer, with one fixed line', async () => {
      const before = botPosts(source.id).length;
      const m = h.discord.say({ authorId: h.ids.bob, threadId: source.id, content: 'approve' });
      await eventually(async () => (await h.caseEvents('C01CMD')).some((e) => e.type === 'CommandRefused'), {
        what: 'refusal',
      });
      const refusal = (await h.caseEvents('C01CMD')).find((e) => e.type === 'CommandRefused');
      expect(refusal?.data).toEqual({
        authorId: h.ids.bob,
        messageId: m.id,
        command: 'approve',
        reason: 'not_a_reviewer',
      });
      await eventually(() => botPosts(source.id).length === before + 1, { what: 'refusal line' });
      expect(botPosts(source.id)[before]?.content).toContain('Only the reviewers listed');
      expect((await h.caseEvents('C01CMD')).some((e) => e.type === 'ReviewerDecided')).toBe(false);
      expect(await h.sourceEvents(m.id)).toEqual([]);
    });

    it('records a reviewer decision, a revision with its text, and a link review settlement', async () => {
      h.discord.say({ authorId: h.ids.rita, threadId: source.id, content: 'revise: keep the header row' });
      await eventually(async () => (await h.caseEvents('C01CMD')).some((e) => e.type === 'ReviewerDecided'), {
        what: 'revise',
      });
      await h.requestLinkReview('C01CMD', 'R01LINK', { id: source.id, channelId: h.ids.bugs });
      h.discord.say({ authorId: h.ids.rita, threadId: source.id, content: 'same R01LINK' });
      h.discord.say({ authorId: h.ids.rita, threadId: source.id, content: 'different R01NOPE' });
      await eventually(
        async () =>
          (await h.caseEvents('C01CMD')).filter(
            (e) => e.type === 'LinkReviewSettled' || e.type === 'CommandRefused',
          ).length === 3,
        { what: 'settled' },
      );
      const ev = await h.caseEvents('C01CMD');
      expect(ev.find((e) => e.type === 'ReviewerDecided')?.data).toMatchObject({
        reviewerId: h.ids.rita,
        decision: 'revise',
        text: 'keep the header row',
      });
      expect(ev.find((e) => e.type === 'LinkReviewSettled')?.data).toMatchObject({
        reviewId: 'R01LINK',
        verdict: 'same',
      });
      expect(
        ev.filter((e) => e.type === 'CommandRefused').map((e) => (e.data as { reason: string }).reason),
      ).toEqual(['not_a_reviewer', 'not_applicable']);
    });

    it('takes the same commands as a slash command, answered only to the invoker', async () => {
      const ok = h.discord.slash({
        authorId: h.ids.rita,
        threadId: source.id,
        name: 'caseloop',
        subcommand: 'reject',
        options: { reason: 'duplicate of the export bug' },
      });
      const refused = h.discord.slash({
        authorId: h.ids.bob,
        threadId: source.id,
        name: 'caseloop',
        subcommand: 'approve',
      });
      const outside = h.discord.slash({
        authorId: h.ids.rita,
        channelId: h.ids.bugs,
        name: 'caseloop',
        subcommand: 'approve',
      });
      await eventually(
        () =>
          h.discord.interactionLog().filter((i) => [ok.id, refused.id, outside.id].includes(i.id) && i.reply)
            .length === 3,
        { what: 'three answers' },
      );
      const log = new Map(h.discord.interactionLog().map((i) => [i.id, i.reply]));
      expect(log.get(ok.id)).toMatchObject({ ephemeral: true, content: 'Recorded: reject.' });
      expect(log.get(refused.id)?.content).toContain('Only the reviewers listed');
      expect(log.get(outside.id)?.content).toBe('Use /caseloop inside a case thread.');
      const ev = await h.caseEvents('C01CMD');
      expect(
        ev.find((e) => e.type === 'ReviewerDecided' && e.data.decision === 'reject')?.data,
      ).toMatchObject({ reviewerId: h.ids.rita, messageId: ok.id, text: 'duplicate of the export bug' });
      expect(
        ev.find((e) => e.type === 'CommandRefused' && e.data.messageId === refused.id)?.data,
      ).toMatchObject({ reason: 'not_a_reviewer', command: 'approve' });
    });
  });
});
