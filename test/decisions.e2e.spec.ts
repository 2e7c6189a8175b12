import { createHash } from 'node:crypto';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxMessage } from '@caseloop/discord-sandbox';
import { git } from '@caseloop/stack';
import { LoopWorld, ofType, REPORTS, until } from './e2e/loop.fixture';

jest.setTimeout(900_000);

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const ROOT = join(__dirname, '..');
const REVISION_TEXT = 'Say in the cart module that a total counts every unit, not every line.';

interface Interaction {
  id: string;
  type: number;
  name: string;
  authorId: string;
  response: string | null;
  reply: { content: string; ephemeral: boolean } | null;
  modal: { customId: string; title: string } | null;
}

/**
 * A reviewer decides the way Discord users do, through all six services: the receipt's Request
 * changes button opens a modal, its text resumes the task, the second receipt's Approve button
 * approves. Clicks and the modal go through the local Discord's control routes (what its chat page
 * does for a person), so each reaches intake as Discord's INTERACTION_CREATE from that user.
 */
describe('decisions by button and modal, end to end', () => {
  let w: LoopWorld;
  let revisionDir = '';
  let failed = false;

  beforeAll(async () => {
    // What the scripted runtime does on attempt 2: the revision the reviewer asks for.
    revisionDir = await mkdtemp(join(tmpdir(), 'caseloop-revision-'));
    const fixed = await readFile(join(ROOT, 'examples', 'shop-cart-fix', 'src', 'cart.js'), 'utf8');
    const revised = fixed.replace(
      '/** Prices are in cents; quantities are whole numbers. */',
      '/** Prices are in cents; quantities are whole numbers; a total counts every unit, not every line. */',
    );
    if (revised === fixed) throw new Error('the example fix changed: update the revision this test applies');
    await mkdir(join(revisionDir, 'src'), { recursive: true });
    await writeFile(join(revisionDir, 'src', 'cart.js'), revised);
    w = await LoopWorld.start({ laterAttempts: [{ copy: revisionDir }] });
  });
  afterEach(() => {
    const state = expect.getState();
    if (state.assertionCalls > 0 && state.numPassingAsserts < state.assertionCalls) failed = true;
  });
  afterAll(async () => {
    if (failed && w) process.stdout.write(w.logTail());
    await w?.stop();
    if (revisionDir) await rm(revisionDir, { recursive: true, force: true });
  });

  /** The local Discord's control API, as its chat page calls it for a person. */
  const control = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${w.discord.sandboxUrl}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /sandbox${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };
  const answered = (id: string, what: string) =>
    until(what, 60_000, async () => {
      const i = (await control<Interaction[]>('GET', '/interactions')).find((x) => x.id === id);
      return i?.response ? i : null;
    });
  const buttonsOf = (m: SandboxMessage): { custom_id: string; label: string }[] =>
    m.components.flatMap((row) => (row.components ?? []) as { custom_id: string; label: string }[]);
  /** The receipt chunk that carries the decision buttons, for the receipt `receiptId`. */
  const decisionMessage = (reportId: string, receiptId: string): SandboxMessage | undefined =>
    w
      .botPosts(reportId)
      .find((m) => buttonsOf(m).some((b) => b.custom_id === `caseloop:approve:${receiptId}`));
  const statusMessages = (reportId: string) =>
    w.botPosts(reportId).filter((m) => m.content.includes('live status'));

  it('Request changes opens a modal whose text resumes the task; Approve on the next receipt approves; one status message, edited; the proof inline', async () => {
    const t0 = Date.now();
    const report = w.report('alice', REPORTS.cartTotal);
    const { caseId, outcome } = await w.caseOf(report.id);
    expect(outcome).toBe('opened');
    await until('awaiting review', 420_000, async () => (await w.view(caseId)).status === 'awaiting_review');

    // The first receipt: its buttons, and the privacy-reviewed screenshot attached inline.
    let events = await w.events(caseId);
    const first = ofType(events, 'ReceiptBuilt').at(-1);
    const firstId = first?.data.receiptId as string;
    const firstRevision = first?.data.revision as string;
    const firstButtons = await until('the first receipt with its buttons', 60_000, () =>
      decisionMessage(report.id, firstId),
    );
    expect(buttonsOf(firstButtons).map((b) => b.label)).toEqual(['Approve', 'Request changes', 'Reject']);
    const shot = ofType(events, 'ArtifactStored').find(
      (a) => a.data.kind === 'screenshot' && a.data.revision === firstRevision,
    );
    const attached = w
      .receipts(report.id)
      .concat(firstButtons)
      .flatMap((m) => m.attachments)
      .find((a) => a.contentType === 'image/png');
    expect(attached).toBeDefined();
    const png = Buffer.from(await (await fetch(attached?.url as string)).arrayBuffer());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(sha256(png)).toBe(shot?.data.sha256);

    const status = await until('the live status', 60_000, () => statusMessages(report.id)[0]);

    // Request changes: Discord shows rita the modal the bot opened; she types what should change.
    const click = await control<Interaction>('POST', '/components', {
      authorId: w.ids.rita,
      messageId: firstButtons.id,
      customId: `caseloop:revise:${firstId}`,
    });
    const opened = await answered(click.id, 'the Request changes modal');
    expect(opened.response).toBe('modal');
    expect(opened.modal?.title).toBe('Request changes');
    const submitted = await control<Interaction>('POST', '/modals', {
      authorId: w.ids.rita,
      interactionId: click.id,
      values: { text: REVISION_TEXT },
    });
    const acknowledged = await answered(submitted.id, 'the modal submission answered');
    expect(acknowledged.reply?.ephemeral).toBe(true);

    const revision = await until(
      'the revision recorded',
      60_000,
      async () => ofType(await w.events(caseId), 'RevisionRequested')[0],
    );
    expect(revision.data).toEqual({ reviewerId: w.ids.rita, text: REVISION_TEXT });
    events = await w.events(caseId);
    const resumed = ofType(events, 'TaskResumed').find((e) => e.seq > revision.seq);
    expect(resumed?.data).toMatchObject({ reason: 'revision_requested', note: REVISION_TEXT });

    // The task runs again on the reviewer's text and comes back with a second receipt on a new revision.
    const second = await until('a second receipt after the revision', 420_000, async () =>
      ofType(await w.events(caseId), 'ReceiptBuilt').find((e) => e.seq > revision.seq),
    );
    const secondId = second.data.receiptId;
    expect(secondId).not.toBe(firstId);
    expect(second.data.revision).not.toBe(firstRevision);
    await until('awaiting review again', 300_000, async () => {
      const es = await w.events(caseId);
      return ofType(es, 'CaseAwaitingReview').some((e) => e.seq > second.seq);
    });
    const secondButtons = await until('the second receipt with its buttons', 60_000, () =>
      decisionMessage(report.id, secondId),
    );

    // Approve on the new receipt.
    const approve = await control<Interaction>('POST', '/components', {
      authorId: w.ids.rita,
      messageId: secondButtons.id,
      customId: `caseloop:approve:${secondId}`,
    });
    const approvedAnswer = await answered(approve.id, 'the approval answered');
    expect(approvedAnswer).toMatchObject({ response: 'message', modal: null });
    expect(approvedAnswer.reply?.ephemeral).toBe(true);
    await until('approved', 120_000, async () => (await w.view(caseId)).status === 'approved');
    events = await w.events(caseId);
    const approved = ofType(events, 'CaseApproved')[0];
    expect(approved?.data).toMatchObject({
      reviewerId: w.ids.rita,
      branch: `caseloop/${caseId}`,
      revision: second.data.revision,
    });
    expect(await w.stack.remote.head(`caseloop/${caseId}`)).toBe(second.data.revision);
    expect(await git(w.stack.remote.path, ['show', `${second.data.revision}:src/cart.js`])).toContain(
      'a total counts every unit, not every line',
    );
    expect(ofType(events, 'ReviewerDecided').map((e) => [e.data.decision, e.data.text])).toEqual([
      ['revise', REVISION_TEXT],
      ['approve', null],
    ]);

    // One live status for the whole case: posted once, edited in place through both rounds.
    await until('the status shows the approval', 60_000, () =>
      statusMessages(report.id)[0]?.content.includes('approved'),
    );
    const statuses = statusMessages(report.id);
    expect(statuses).toHaveLength(1);
    expect(statuses[0]?.id).toBe(status.id);
    expect(statuses[0]?.editedTimestamp).not.toBeNull();
    const statusPosts = w.discord.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path === `/channels/${report.id}/messages` &&
        String((r.body as { content?: string } | null)?.content).includes('live status'),
    );
    expect(statusPosts).toHaveLength(1);
    const statusEdits = w.discord.requests.filter(
      (r) =>
        r.method === 'PATCH' && r.path === `/channels/${report.id}/messages/${status.id}` && r.status === 200,
    );
    expect(statusEdits.length).toBeGreaterThanOrEqual(3);
    // The thread's own count: every message it holds but the thread starter message (type 21, "not
    // including the initial message"), and nothing posted beyond them.
    const thread = w.discord.threads().find((t) => t.id === report.id);
    expect(thread?.messageCount).toBe(w.discord.messages(report.id).filter((m) => m.type !== 21).length);

    // The second receipt carries its own screenshot, of the revised build.
    const secondShot = ofType(events, 'ArtifactStored').find(
      (a) => a.data.kind === 'screenshot' && a.data.revision === second.data.revision,
    );
    const secondReceipt = w
      .botPosts(report.id)
      .filter((m) => m.content.includes(secondId) || m.id === secondButtons.id);
    const secondPng = secondReceipt.flatMap((m) => m.attachments).find((a) => a.contentType === 'image/png');
    expect(secondPng).toBeDefined();
    const bytes = Buffer.from(await (await fetch(secondPng?.url as string)).arrayBuffer());
    expect(sha256(bytes)).toBe(secondShot?.data.sha256);

    const audit = await w.audit(caseId);
    expect(audit.code).toBe(0);
    process.stdout.write(`decisions: report to revision to approval in ${Date.now() - t0} ms\n`);
  });
});
