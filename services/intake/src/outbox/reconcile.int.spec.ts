import { eventually } from '@caseloop/testing';
import { IntakeHarness, StartedIntake } from '../../test/intake.fixture';

jest.setTimeout(180_000);

/**
 * Reconciliation on Discord's real semantics: a re-fetched message has no nonce, a nonce whose
 * message was deleted answers 10008, threads get archived and locked. Each case leaves an intent
 * open (the intake stops with the outcome unknown) and restarts.
 */
describe('outbox reconciliation without the nonce', () => {
  let h: IntakeHarness;

  beforeAll(async () => {
    h = await IntakeHarness.create({ limits: { reportsPerDayPerUser: 10_000 } });
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  const botPosts = (threadId: string) => h.botPosts(threadId);
  const posts = (threadId: string) =>
    h.discord.requests.filter((r) => r.method === 'POST' && r.path === `/channels/${threadId}/messages`);
  const outcomes = async (caseId: string) =>
    (await h.caseEvents(caseId))
      .filter((e) => e.type === 'DeliveryConfirmed' || e.type === 'DeliveryRefused')
      .map((e) => e.type);

  /** A report whose ack POST Discord answered `status` (502 after storing, or 503 before): the intent stays open. */
  async function leaveOpen(
    caseId: string,
    content: string,
    fault: { status: 502 | 503; when: 'after' | 'before' },
  ): Promise<{ messageId: string }> {
    const intake: StartedIntake = await h.start();
    const m = h.discord.say({
      authorId: h.ids.alice,
      channelId: h.ids.bugs,
      content: `report for ${caseId}`,
    });
    await eventually(async () => (await h.sourceEvents(m.id)).length === 2, { what: 'recorded' });
    h.discord.startThread({ messageId: m.id, name: `Case ${caseId}` });
    const rule = h.discord.inject({
      method: 'POST',
      path: `/channels/${m.id}/messages`,
      times: 100,
      ...fault,
    });
    const req = await h.requestDelivery({ caseId, deliveryId: `D-${caseId}`, message: m, content });
    await expect(intake.runtime.onDeliveryRequested(req)).rejects.toThrow();
    await intake.stop();
    rule.cancel();
    expect(await outcomes(caseId)).toEqual([]);
    return { messageId: m.id };
  }

  it('recognises its stored post by author, thread, fingerprint and window although Discord trimmed it and later chatter followed', async () => {
    // Discord stores content without its trailing whitespace: the bytes no longer hash the same.
    const { messageId } = await leaveOpen('C01NONCE', 'We are on it.  \n', { status: 502, when: 'after' });
    expect(botPosts(messageId).map((m) => m.content)).toEqual(['We are on it.']);
    expect(h.discord.rawMessages(messageId).every((m) => !('nonce' in m))).toBe(true);
    for (let i = 0; i < 3; i++)
      h.discord.say({ authorId: h.ids.bob, threadId: messageId, content: `me too ${i}` });
    const before = posts(messageId).length;

    // Ten minutes later: outside the dedupe window, so a re-post is out of the question; it is found.
    const later = await h.start({ now: () => new Date(Date.now() + 10 * 60_000) });
    await eventually(async () => (await outcomes('C01NONCE')).length === 1, { what: 'resolved' });
    const confirmed = (await h.caseEvents('C01NONCE')).find((e) => e.type === 'DeliveryConfirmed');
    expect(confirmed?.data).toMatchObject({ reconciled: true, discordMessageId: botPosts(messageId)[0]?.id });
    expect(posts(messageId)).toHaveLength(before);
    expect(botPosts(messageId)).toHaveLength(1);
    await later.stop();
  });

  it('a post a moderator deleted: the same nonce answers 10008, nothing is posted, the chunk is refused', async () => {
    const { messageId } = await leaveOpen('C01GONE', 'Recorded as a case.', { status: 502, when: 'after' });
    const [stored] = botPosts(messageId);
    h.discord.deleteMessage(stored?.id as string);

    const again = await h.start();
    await eventually(async () => (await outcomes('C01GONE')).length === 1, { what: 'resolved' });
    const refused = (await h.caseEvents('C01GONE')).find((e) => e.type === 'DeliveryRefused');
    expect(refused?.data).toMatchObject({ reason: 'message_deleted' });
    expect(posts(messageId).at(-1)?.status).toBe(404);
    expect(botPosts(messageId)).toHaveLength(0);
    await again.stop();
  });

  it('an archived thread: the stored post is read back from it and the thread is left archived', async () => {
    const { messageId } = await leaveOpen('C01ARCH', 'Recorded.', { status: 502, when: 'after' });
    h.discord.archiveThread(messageId);
    const before = posts(messageId).length;

    const again = await h.start();
    await eventually(async () => (await outcomes('C01ARCH')).length === 1, { what: 'resolved' });
    expect(await outcomes('C01ARCH')).toEqual(['DeliveryConfirmed']);
    expect(posts(messageId)).toHaveLength(before);
    expect(h.discord.threads().find((t) => t.id === messageId)?.archived).toBe(true);
    await again.stop();
  });

  it('an archived thread without the post: re-sent inside the window, which unarchives it, once', async () => {
    const { messageId } = await leaveOpen('C01UNARCH', 'Recorded.', { status: 503, when: 'before' });
    h.discord.archiveThread(messageId);

    const again = await h.start();
    await eventually(async () => (await outcomes('C01UNARCH')).length === 1, { what: 'resolved' });
    expect(await outcomes('C01UNARCH')).toEqual(['DeliveryConfirmed']);
    expect(botPosts(messageId)).toHaveLength(1);
    expect(h.discord.threads().find((t) => t.id === messageId)?.archived).toBe(false);
    await again.stop();
  });

  it('a locked thread without the post: refused as thread_locked, nothing posted', async () => {
    const { messageId } = await leaveOpen('C01LOCK', 'Recorded.', { status: 503, when: 'before' });
    h.discord.archiveThread(messageId);
    h.discord.lockThread(messageId);

    const again = await h.start();
    await eventually(async () => (await outcomes('C01LOCK')).length === 1, { what: 'resolved' });
    const refused = (await h.caseEvents('C01LOCK')).find((e) => e.type === 'DeliveryRefused');
    expect(refused?.data).toMatchObject({ reason: 'thread_locked' });
    expect(botPosts(messageId)).toHaveLength(0);
    await again.stop();
  });

  it('the same words already confirmed for another delivery are not claimed twice', async () => {
    const intake = await h.start();
    const m = h.discord.say({ authorId: h.ids.alice, channelId: h.ids.bugs, content: 'report twice' });
    await eventually(async () => (await h.sourceEvents(m.id)).length === 2, { what: 'recorded' });
    await intake.runtime.onDeliveryRequested(
      await h.requestDelivery({ caseId: 'C01TWICE', deliveryId: 'D-first', message: m, content: 'Noted.' }),
    );
    const rule = h.discord.inject({
      method: 'POST',
      path: `/channels/${m.id}/messages`,
      status: 503,
      when: 'before',
      times: 100,
    });
    const second = await h.requestDelivery({
      caseId: 'C01TWICE',
      deliveryId: 'D-second',
      message: m,
      content: 'Noted.',
    });
    await expect(intake.runtime.onDeliveryRequested(second)).rejects.toThrow();
    await intake.stop();
    rule.cancel();

    const again = await h.start();
    await eventually(
      async () => (await h.caseEvents('C01TWICE')).filter((e) => e.type === 'DeliveryConfirmed').length === 2,
      { what: 'both confirmed' },
    );
    const ids = (await h.caseEvents('C01TWICE')).flatMap((e) =>
      e.type === 'DeliveryConfirmed' ? [e.data.discordMessageId] : [],
    );
    expect(new Set(ids).size).toBe(2);
    expect(botPosts(m.id)).toHaveLength(2);
    await again.stop();
  });
});
