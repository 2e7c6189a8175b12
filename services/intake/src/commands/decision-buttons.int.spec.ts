import { eventually } from '@caseloop/testing';
import { IntakeHarness, StartedIntake } from '../../test/intake.fixture';

jest.setTimeout(120_000);

/**
 * Decisions the way Discord users make them: buttons on the receipt and on a link review, a modal
 * for the text, refusals only the clicker sees. Intake's own discord.js client answers the
 * interactions the local Discord dispatches.
 */
describe('decision buttons and modals', () => {
  let h: IntakeHarness;
  let intake: StartedIntake;
  let report: { id: string; channelId: string };
  let receiptMessageId: string;
  const caseId = 'C01BUTTONS';

  beforeAll(async () => {
    h = await IntakeHarness.create();
    intake = await h.start();
    const m = h.discord.say({ authorId: h.ids.alice, channelId: h.ids.bugs, content: 'cart total is wrong' });
    await eventually(async () => (await h.sourceEvents(m.id)).length === 2, { what: 'recorded' });
    report = { id: m.id, channelId: h.ids.bugs };
    await intake.runtime.onDeliveryRequested(
      await h.requestDelivery({
        caseId,
        deliveryId: 'receipt-R01-src',
        message: report,
        kind: 'receipt',
        receiptId: 'R01',
        content: `**caseloop receipt** R01\n\n${'Checks passed. '.repeat(160)}\n\nResidual risk: none known.`,
      }),
    );
    const posts = h.botPosts(report.id);
    receiptMessageId = posts.at(-1)?.id as string;
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  const decided = async () =>
    (await h.caseEvents(caseId)).filter((e) => e.type === 'ReviewerDecided').map((e) => e.data);
  const answerOf = (id: string) => h.discord.interactionLog().find((x) => x.id === id);

  it('puts Approve, Request changes and Reject under the last chunk of the receipt only', () => {
    const posts = h.botPosts(report.id);
    expect(posts.length).toBeGreaterThan(1);
    expect(posts.slice(0, -1).every((p) => p.components.length === 0)).toBe(true);
    const buttons = (posts.at(-1)?.components[0]?.components ?? []) as { label: string; custom_id: string }[];
    expect(buttons.map((b) => b.label)).toEqual(['Approve', 'Request changes', 'Reject']);
    expect(buttons.map((b) => b.custom_id)).toEqual([
      'caseloop:approve:R01',
      'caseloop:revise:R01',
      'caseloop:reject:R01',
    ]);
  });

  it('refuses a stranger ephemerally, opens no modal, records the refusal', async () => {
    const before = h.discord.messages(report.id).length;
    const click = h.discord.click({
      authorId: h.ids.bob,
      messageId: receiptMessageId,
      customId: 'caseloop:revise:R01',
    });
    await eventually(() => answerOf(click.id)?.reply, { what: 'the refusal' });
    expect(answerOf(click.id)).toMatchObject({ response: 'message', modal: null });
    expect(answerOf(click.id)?.reply).toMatchObject({ ephemeral: true });
    expect(answerOf(click.id)?.reply?.content).toContain('Only the reviewers listed');
    const approve = h.discord.click({
      authorId: h.ids.bob,
      messageId: receiptMessageId,
      customId: 'caseloop:approve:R01',
    });
    await eventually(() => answerOf(approve.id)?.reply, { what: 'the second refusal' });
    expect(answerOf(approve.id)?.reply?.ephemeral).toBe(true);
    expect(h.discord.messages(report.id)).toHaveLength(before);
    const refusals = (await h.caseEvents(caseId))
      .filter((e) => e.type === 'CommandRefused')
      .map((e) => e.data);
    expect(refusals).toEqual([
      { authorId: h.ids.bob, messageId: click.id, command: 'revise', reason: 'not_a_reviewer' },
      { authorId: h.ids.bob, messageId: approve.id, command: 'approve', reason: 'not_a_reviewer' },
    ]);
    expect(await decided()).toEqual([]);
  });

  it('a reviewer asks for changes through the modal: the text is recorded as the revision', async () => {
    const click = h.discord.click({
      authorId: h.ids.rita,
      messageId: receiptMessageId,
      customId: 'caseloop:revise:R01',
    });
    await eventually(() => answerOf(click.id)?.response === 'modal', { what: 'the modal' });
    expect(answerOf(click.id)?.modal).toMatchObject({
      customId: 'caseloop:revise-text:R01',
      title: 'Request changes',
    });
    const submit = h.discord.submitModal({
      authorId: h.ids.rita,
      interactionId: click.id,
      values: { text: '  keep the header row in the export  ' },
    });
    await eventually(() => answerOf(submit.id)?.reply, { what: 'the answer' });
    expect(answerOf(submit.id)?.reply).toMatchObject({ ephemeral: true, content: 'Recorded: revise.' });
    expect(await decided()).toEqual([
      {
        reviewerId: h.ids.rita,
        messageId: submit.id,
        decision: 'revise',
        text: 'keep the header row in the export',
      },
    ]);
  });

  it('a reviewer approves by button, answered only to them', async () => {
    const click = h.discord.click({
      authorId: h.ids.rita,
      messageId: receiptMessageId,
      customId: 'caseloop:approve:R01',
    });
    await eventually(() => answerOf(click.id)?.reply, { what: 'the answer' });
    expect(answerOf(click.id)?.reply).toMatchObject({ ephemeral: true, content: 'Recorded: approve.' });
    expect((await decided()).at(-1)).toEqual({
      reviewerId: h.ids.rita,
      messageId: click.id,
      decision: 'approve',
      text: null,
    });
  });

  it('Reject opens its own modal, and the reason is recorded', async () => {
    const click = h.discord.click({
      authorId: h.ids.rita,
      messageId: receiptMessageId,
      customId: 'caseloop:reject:R01',
    });
    await eventually(() => answerOf(click.id)?.response === 'modal', { what: 'the modal' });
    const submit = h.discord.submitModal({
      authorId: h.ids.rita,
      interactionId: click.id,
      values: { text: 'duplicate' },
    });
    await eventually(() => answerOf(submit.id)?.reply, { what: 'the answer' });
    expect((await decided()).at(-1)).toMatchObject({ decision: 'reject', text: 'duplicate' });
  });

  it('Same case / Different on a link review settle it; the typed commands still work beside them', async () => {
    const held = h.discord.say({
      authorId: h.ids.alice,
      channelId: h.ids.bugs,
      content: 'total wrong again',
    });
    await eventually(async () => (await h.sourceEvents(held.id)).length === 2, { what: 'recorded' });
    await h.requestLinkReview(caseId, 'R01LINK', { id: held.id, channelId: h.ids.bugs });
    await intake.runtime.onDeliveryRequested(
      await h.requestDelivery({
        caseId,
        deliveryId: 'review-R01LINK',
        message: { id: held.id, channelId: h.ids.bugs },
        kind: 'link_review',
        content: 'This might be the same problem. Reviewers: reply `same R01LINK` or `different R01LINK`.',
      }),
    );
    const question = h.botPosts(held.id)[0];
    const labels = ((question?.components[0]?.components ?? []) as { label: string }[]).map((b) => b.label);
    expect(labels).toEqual(['Same case', 'Different']);
    const click = h.discord.click({
      authorId: h.ids.rita,
      messageId: question?.id as string,
      customId: 'caseloop:same:R01LINK',
    });
    await eventually(() => answerOf(click.id)?.reply, { what: 'the answer' });
    expect(answerOf(click.id)?.reply).toMatchObject({ ephemeral: true, content: 'Recorded: same.' });
    // Settled: the other button now refers to no pending review.
    const late = h.discord.click({
      authorId: h.ids.rita,
      messageId: question?.id as string,
      customId: 'caseloop:different:R01LINK',
    });
    await eventually(() => answerOf(late.id)?.reply, { what: 'the late answer' });
    expect(answerOf(late.id)?.reply?.content).toContain('does not apply');
    const settled = (await h.caseEvents(caseId))
      .filter((e) => e.type === 'LinkReviewSettled')
      .map((e) => e.data);
    expect(settled).toEqual([
      { reviewerId: h.ids.rita, messageId: click.id, reviewId: 'R01LINK', verdict: 'same' },
    ]);

    h.discord.say({ authorId: h.ids.rita, threadId: report.id, content: 'revise: also the footer' });
    await eventually(async () => (await decided()).some((d) => d.text === 'also the footer'), {
      what: 'typed revise',
    });
  });
});
