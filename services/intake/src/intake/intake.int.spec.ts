import { eventually } from '@caseloop/testing';
import { IntakeHarness, StartedIntake } from '../../test/intake.fixture';

jest.setTimeout(90_000);

const EYES = '👀';

describe('intake through a real discord.js client and the local Discord', () => {
  let h: IntakeHarness;
  let intake: StartedIntake;

  beforeAll(async () => {
    h = await IntakeHarness.create({ limits: { inboundMaxChars: 200, reportsPerDayPerUser: 3 } });
    intake = await h.start();
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  const first = async (messageId: string) => {
    const events = await eventually(
      async () => {
        const ev = await h.sourceEvents(messageId);
        return ev.length > 0 ? ev : null;
      },
      { what: `source ${messageId}`, timeoutMs: 20_000 },
    );
    return (events as NonNullable<typeof events>)[0];
  };

  it('records an authorized report once, then adds 👀 and ReadReceiptAdded', async () => {
    const m = h.discord.say({
      authorId: h.ids.alice,
      channelId: h.ids.bugs,
      content: 'checkout total ignores quantity',
      attachments: [{ filename: 'cart.png', contentType: 'image/png', size: 2048 }],
    });
    await eventually(async () => (await h.sourceEvents(m.id)).length === 2, {
      what: 'receipt',
      timeoutMs: 20_000,
    });
    const [received, receipt] = await h.sourceEvents(m.id);
    expect(received).toMatchObject({
      type: 'SourceReceived',
      aggregate: 'source',
      aggregateId: `discord-${m.id}`,
      data: {
        content: 'checkout total ignores quantity',
        authorId: h.ids.alice,
        via: 'gateway',
        place: { channelId: h.ids.bugs, threadId: null, messageId: m.id },
      },
    });
    if (received?.type !== 'SourceReceived') throw new Error('unreachable');
    expect(received.data.attachments).toEqual([
      expect.objectContaining({
        name: 'cart.png',
        contentType: 'image/png',
        size: 2048,
        url: expect.stringContaining('/attachments/'),
      }),
    ]);
    expect(receipt).toMatchObject({ type: 'ReadReceiptAdded', data: { messageId: m.id, emoji: EYES } });
    expect(h.discord.reactions(m.id)).toEqual([expect.objectContaining({ emoji: EYES, me: true, count: 1 })]);
    // Only after the source was durable: the reaction's PUT is logged after the append.
    const put = h.discord.requests.find((r) => r.method === 'PUT' && r.path.includes(m.id));
    expect(put?.path).toContain('%F0%9F%91%80');
  });

  it('accepts a member of a listed role and a reviewer, and a mention in a mention channel', async () => {
    const bob = h.discord.say({ authorId: h.ids.bob, channelId: h.ids.bugs, content: 'search is slow' });
    const rita = h.discord.say({
      authorId: h.ids.rita,
      channelId: h.ids.bugs,
      content: 'the logo is blurry',
    });
    const mention = h.discord.say({
      authorId: h.ids.bob,
      channelId: h.ids.feedback,
      content: 'please add dark mode',
      mentionsBot: true,
    });
    expect(await first(bob.id)).toMatchObject({ type: 'SourceReceived', data: { authorIsReviewer: false } });
    expect(await first(rita.id)).toMatchObject({ type: 'SourceReceived', data: { authorIsReviewer: true } });
    expect(await first(mention.id)).toMatchObject({ type: 'SourceReceived', data: { mentionedBot: true } });
  });

  it('records every drop with ids and reason only, and answers only oversized and the ceiling', async () => {
    const cases: [string, () => { id: string }][] = [
      [
        'wrong_guild',
        () => h.discord.say({ authorId: h.ids.alice, channelId: h.ids.elsewhere, content: 'another server' }),
      ],
      [
        'channel_not_bound',
        () => h.discord.say({ authorId: h.ids.alice, channelId: h.ids.general, content: 'wrong place' }),
      ],
      [
        'author_is_bot',
        () => h.discord.say({ authorId: h.ids.otherBot, channelId: h.ids.bugs, content: 'beep' }),
      ],
      [
        'author_is_webhook',
        () => h.discord.postAsWebhook({ channelId: h.ids.bugs, content: 'deploy finished' }),
      ],
      [
        'author_not_listed',
        () =>
          h.discord.say({ authorId: h.ids.sam, channelId: h.ids.bugs, content: 'secret customer data here' }),
      ],
      [
        'not_mentioned',
        () => h.discord.say({ authorId: h.ids.bob, channelId: h.ids.feedback, content: 'no mention' }),
      ],
      [
        'empty',
        () =>
          h.discord.say({ authorId: h.ids.bob, channelId: h.ids.feedback, content: '', mentionsBot: true }),
      ],
      [
        'oversized',
        () => h.discord.say({ authorId: h.ids.bob, channelId: h.ids.bugs, content: 'x'.repeat(201) }),
      ],
    ];
    for (const [reason, act] of cases) {
      const m = act();
      const ev = await first(m.id);
      expect({ reason, ev }).toMatchObject({ reason, ev: { type: 'SourceDropped', data: { reason } } });
      expect(JSON.stringify(ev?.data)).not.toMatch(
        /secret customer|deploy finished|beep|wrong place|another server|xxxxx/,
      );
    }
    const oversized = h.discord.messages(h.ids.bugs).find((m) => m.content === 'x'.repeat(201));
    await eventually(
      () =>
        h.discord
          .messages(h.ids.bugs)
          .some((m) => m.author.bot && m.replyTo === oversized?.id && m.content.includes('longer than 200')),
      { what: 'oversize notice' },
    );
    const selfDrop = await eventually(
      async () => {
        const notice = h.discord
          .messages(h.ids.bugs)
          .find((m) => m.author.id === h.discord.botId && m.replyTo === oversized?.id);
        return notice ? (await h.sourceEvents(notice.id))[0] : null;
      },
      { what: 'our own notice recorded as author_is_self' },
    );
    expect(selfDrop).toMatchObject({ type: 'SourceDropped', data: { reason: 'author_is_self' } });
    expect(h.logLines.join('\n')).not.toContain(h.discord.token);
  });

  it('enforces the daily ceiling per reporter and tells them once per UTC day', async () => {
    // alice already made one report above; the ceiling is 3.
    const ids = [];
    for (let i = 0; i < 4; i++) {
      const m = h.discord.say({ authorId: h.ids.alice, channelId: h.ids.bugs, content: `report ${i}` });
      ids.push(m.id);
      await first(m.id);
    }
    const kinds = await Promise.all(ids.map(async (id) => (await h.sourceEvents(id))[0]));
    expect(kinds.map((e) => (e?.type === 'SourceDropped' ? e.data.reason : e?.type))).toEqual([
      'SourceReceived',
      'SourceReceived',
      'daily_ceiling',
      'daily_ceiling',
    ]);
    await eventually(
      () =>
        h.discord.messages(h.ids.bugs).filter((m) => m.author.bot && m.content.includes("today's limit"))
          .length === 1,
      { what: 'one ceiling notice' },
    );
    const notices = h.discord
      .messages(h.ids.bugs)
      .filter((m) => m.author.bot && m.content.includes("today's limit"));
    expect(notices).toHaveLength(1);
    expect(notices[0]?.replyTo).toBe(ids[2]);
    const dropped = await h.sourceEvents(ids[2] as string);
    expect(dropped.map((e) => e.type)).toEqual(['SourceDropped', 'DropNoticeSent']);
  });

  it('refuses to start when the binding lists a bot as a user, naming the key', async () => {
    const saved = h.binding;
    h.binding = { ...saved, reporters: [...saved.reporters, h.ids.otherBot] };
    try {
      await expect(h.start()).rejects.toThrow(`binding.reporters[1]: user ${h.ids.otherBot} is a bot`);
    } finally {
      h.binding = saved;
    }
  });

  it('exposes its counters', async () => {
    const text = await intake.registry.metrics();
    expect(text).toMatch(/caseloop_intake_messages_in_total\{via="gateway"\} \d+/);
    expect(text).toMatch(/caseloop_intake_dropped_total\{reason="author_not_listed"\} 1/);
    expect(text).toContain('caseloop_intake_gateway_ready 1');
  });

  it('never puts the token in an event or a log line', async () => {
    const all = await h.events();
    expect(all.length).toBeGreaterThan(10);
    expect(JSON.stringify(all)).not.toContain(h.discord.token);
    expect(h.logLines.length).toBeGreaterThan(3);
    expect(h.logLines.join('\n')).not.toContain(h.discord.token);
  });
});
