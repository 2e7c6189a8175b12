import { parseBinding } from '../binding/binding.schema';
import { AuthorizationContext, authorize, dropNotice, DropReason } from './authorization.decider';
import { InboundMessage } from './inbound-message';

const SELF = '999';
const binding = parseBinding({
  guildId: '100',
  channels: [
    { id: '200', mode: 'open' },
    { id: '201', mode: 'mention' },
  ],
  reporters: ['300'],
  reporterRoles: ['700'],
  reviewers: ['400'],
  limits: { inboundMaxChars: 50, reportsPerDayPerUser: 2, replyChunkSize: 2000 },
});

const msg = (over: Partial<InboundMessage> = {}): InboundMessage => ({
  id: '5000',
  channelId: '200',
  guildId: '100',
  type: 0,
  content: 'the cart total is wrong',
  createdAt: '2026-11-29T10:00:00.000Z',
  authorId: '300',
  authorIsBot: false,
  authorIsSystem: false,
  webhookId: null,
  mentionIds: [],
  memberRoles: null,
  attachments: [],
  ...over,
});

const ctx = (over: Partial<AuthorizationContext> = {}): AuthorizationContext => ({
  binding,
  selfId: SELF,
  guildId: '100',
  boundChannelId: '200',
  threadId: null,
  inCaseThread: false,
  authorRoles: [],
  reportsToday: 0,
  ...over,
});

const attachment = {
  id: '1',
  name: 'trace.txt',
  contentType: 'text/plain',
  size: 10,
  url: 'https://cdn.example/1',
};

describe('authorize: the drop table', () => {
  const table: [string, InboundMessage, AuthorizationContext, DropReason][] = [
    ['another guild', msg({ guildId: '101' }), ctx({ guildId: '101' }), 'wrong_guild'],
    [
      'a channel that is not bound',
      msg({ channelId: '202' }),
      ctx({ boundChannelId: '202' }),
      'channel_not_bound',
    ],
    [
      'a thread whose parent is not bound',
      msg({ channelId: '6000' }),
      ctx({ boundChannelId: '202', threadId: '6000' }),
      'channel_not_bound',
    ],
    ['a bot', msg({ authorId: '301', authorIsBot: true }), ctx(), 'author_is_bot'],
    ['a listed user who is a bot account', msg({ authorIsBot: true }), ctx(), 'author_is_bot'],
    ['a webhook', msg({ webhookId: '77', authorIsBot: true }), ctx(), 'author_is_webhook'],
    ['ourselves', msg({ authorId: SELF, authorIsBot: true }), ctx(), 'author_is_self'],
    ['a stranger', msg({ authorId: '302' }), ctx(), 'author_not_listed'],
    [
      'a stranger with an unlisted role',
      msg({ authorId: '302' }),
      ctx({ authorRoles: ['701'] }),
      'author_not_listed',
    ],
    [
      'no mention in a mention channel',
      msg({ channelId: '201' }),
      ctx({ boundChannelId: '201' }),
      'not_mentioned',
    ],
    ['too long', msg({ content: 'x'.repeat(51) }), ctx(), 'oversized'],
    ['over the daily ceiling', msg(), ctx({ reportsToday: 2 }), 'daily_ceiling'],
    ['blank', msg({ content: '  \n ' }), ctx(), 'empty'],
    [
      'only a mention',
      msg({ channelId: '201', content: `<@${SELF}> `, mentionIds: [SELF] }),
      ctx({ boundChannelId: '201' }),
      'empty',
    ],
    ['a system message (thread created)', msg({ type: 18 }), ctx(), 'system_message'],
    ['a system author', msg({ authorIsSystem: true }), ctx(), 'system_message'],
  ];

  it.each(table)('drops %s', (_what, m, c, reason) => {
    expect(authorize(m, c)).toEqual({ verdict: 'drop', reason });
  });

  it('covers every reason of the contract', async () => {
    const { SourceDropped } = await import('@caseloop/contracts');
    const contractReasons = (SourceDropped.schema.shape.reason.options as string[]).slice().sort();
    expect([...new Set(table.map((r) => r[3]))].sort()).toEqual(contractReasons);
  });
});

describe('authorize: accepted', () => {
  it('accepts a listed reporter in an open channel as a report', () => {
    expect(authorize(msg(), ctx())).toEqual({
      verdict: 'accept',
      authorIsReviewer: false,
      mentionedBot: false,
      countsAsReport: true,
    });
  });

  it('accepts any member of a listed role, and reviewers', () => {
    expect(authorize(msg({ authorId: '303' }), ctx({ authorRoles: ['700'] })).verdict).toBe('accept');
    expect(authorize(msg({ authorId: '400' }), ctx())).toMatchObject({
      verdict: 'accept',
      authorIsReviewer: true,
    });
  });

  it('accepts a mention (by id list or by text) in a mention channel', () => {
    const c = ctx({ boundChannelId: '201' });
    expect(
      authorize(msg({ channelId: '201', mentionIds: [SELF], content: `<@${SELF}> broken` }), c),
    ).toMatchObject({ verdict: 'accept', mentionedBot: true });
    expect(authorize(msg({ channelId: '201', content: `<@!${SELF}> broken` }), c).verdict).toBe('accept');
  });

  it('threads inherit their parent binding; a case thread needs no mention and does not count against the ceiling', () => {
    const c = ctx({ boundChannelId: '201', threadId: '6000', inCaseThread: true, reportsToday: 2 });
    expect(authorize(msg({ channelId: '6000' }), c)).toEqual({
      verdict: 'accept',
      authorIsReviewer: false,
      mentionedBot: false,
      countsAsReport: false,
    });
    expect(authorize(msg({ channelId: '6000' }), { ...c, inCaseThread: false })).toEqual({
      verdict: 'drop',
      reason: 'not_mentioned',
    });
  });

  it('accepts an attachment without text, and a message exactly at the size limit', () => {
    expect(authorize(msg({ content: '', attachments: [attachment] }), ctx()).verdict).toBe('accept');
    expect(authorize(msg({ content: 'x'.repeat(50) }), ctx()).verdict).toBe('accept');
  });

  it('checks who before what: a stranger never reaches the size check (so never gets a reply line)', () => {
    expect(authorize(msg({ authorId: '302', content: 'x'.repeat(500) }), ctx())).toEqual({
      verdict: 'drop',
      reason: 'author_not_listed',
    });
  });
});

describe('drop notices', () => {
  it('answers only oversized and the daily ceiling', () => {
    expect(dropNotice('oversized', binding)).toContain('50 characters');
    expect(dropNotice('daily_ceiling', binding)).toContain('limit of 2 reports');
    expect(dropNotice('author_not_listed', binding)).toBeNull();
  });
});
