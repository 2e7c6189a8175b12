import { draft } from '@caseloop/contracts';
import { DependencyUnavailable } from '@caseloop/ledger';
import { eventually } from '@caseloop/testing';
import { IntakeHarness, StartedIntake } from '../../test/intake.fixture';

jest.setTimeout(120_000);

const REV = 'a'.repeat(40);
const check = (name: string, outcome: 'passed' | 'failed') => ({
  name,
  kind: 'other' as const,
  outcome,
  revision: REV,
  durationMs: 10,
  exitCode: outcome === 'passed' ? 0 : 1,
  outputSha256: null,
  outputBytes: 0,
});

describe('one live status per case, edited in place', () => {
  let h: IntakeHarness;
  let intake: StartedIntake;

  beforeAll(async () => {
    h = await IntakeHarness.create();
    intake = await h.start({ statusEditIntervalMs: 400 });
  });
  afterAll(async () => {
    await h?.cleanup();
  });

  it('posts the status once and edits it (PATCH) as the task, checks, browser, evidence and receipt move; bursts coalesce', async () => {
    const caseId = 'C01STATUS';
    const m = h.discord.say({
      authorId: h.ids.alice,
      channelId: h.ids.bugs,
      content: 'checkout total is wrong',
    });
    await eventually(async () => (await h.sourceEvents(m.id)).length === 2, { what: 'recorded' });
    const place = { guildId: h.discord.guildId, channelId: h.ids.bugs, threadId: null, messageId: m.id };
    const sourceId = `discord-${m.id}`;
    const feed = async (
      producer: 'coordinator' | 'worker' | 'evidence',
      events: ReturnType<typeof draft>[],
    ) => {
      for (const e of await h.appendCase(caseId, producer, events)) await intake.runtime.onCaseProgress(e);
    };
    const status = () =>
      h.discord
        .messages(m.id)
        .find((x) => x.author.id === h.discord.botId && x.content.includes('live status'));
    const threadCount = () => h.discord.threads().find((t) => t.id === m.id)?.messageCount;

    // Nothing to follow before a task exists.
    await feed('coordinator', [
      draft('CaseOpened', {
        sourceId,
        place,
        reporterId: h.ids.alice,
        title: 'Checkout total',
        confidence: 1,
        reasons: [],
      }),
    ]);
    expect(h.discord.threads().some((t) => t.id === m.id)).toBe(false);

    await feed('coordinator', [
      draft('TaskAssigned', {
        taskId: 'T01',
        repository: 'shop',
        targetBranch: 'main',
        targetRevision: null,
        brief: 'fix the total',
      }),
    ]);
    await eventually(() => status()?.content.includes('Task `T01` assigned'), { what: 'status posted' });
    const statusId = status()?.id as string;
    const count = threadCount();

    await feed('worker', [
      draft('AttemptStarted', {
        taskId: 'T01',
        attemptId: 'A1',
        attempt: 1,
        route: { name: 'default', kind: 'normal' },
        fromCleanTree: true,
      }),
    ]);
    // Check by check: the status moves with each CheckStarted / CheckFinished.
    const started = (index: number, name: string) =>
      draft('CheckStarted', {
        taskId: 'T01',
        revision: REV,
        name,
        kind: 'other',
        index,
        total: 3,
        attemptId: null,
      });
    const finished = (index: number, name: string, outcome: 'passed' | 'failed') =>
      draft('CheckFinished', {
        taskId: 'T01',
        index,
        total: 3,
        attemptId: null,
        result: check(name, outcome),
        excerpt: { head: [], tail: [], omittedLines: 0 },
        logKey: null,
      });
    // Progress does not hold the case's events for Discord's edit interval: the handler returns
    // before the edit, which follows.
    const edits = () =>
      h.discord.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith(`/messages/${statusId}`))
        .length;
    const shows = (text: string) => eventually(() => status()?.content.includes(text), { what: text });
    const before = edits();
    await feed('worker', [started(0, 'format')]);
    expect(edits()).toBe(before);
    await shows('⏳ Checks 0 of 3 run (0 passed) on `aaaaaaaaaaaa` · running `format`');
    await feed('worker', [finished(0, 'format', 'passed'), started(1, 'lint')]);
    await shows('⏳ Checks 1 of 3 run (1 passed) on `aaaaaaaaaaaa` · running `lint`');
    await feed('worker', [
      finished(1, 'lint', 'passed'),
      started(2, 'focused'),
      finished(2, 'focused', 'failed'),
    ]);
    await shows('⏳ Checks 3 of 3 run (2 passed, 1 failed)');
    await feed('worker', [
      draft('ChecksCompleted', {
        taskId: 'T01',
        revision: REV,
        targetHead: REV,
        results: [check('format', 'passed'), check('lint', 'passed'), check('focused', 'failed')],
        passed: false,
      }),
    ]);
    expect(status()?.content).toContain('Checks 2 of 3 passed');

    // A burst of evidence events: fewer edits than events.
    const patchesBefore = h.discord.requests.filter(
      (r) => r.method === 'PATCH' && r.path.endsWith(`/messages/${statusId}`),
    ).length;
    const burst = await h.appendCase(caseId, 'evidence', [
      draft('ClientValidationStarted', {
        taskId: 'T01',
        revision: REV,
        flow: 'checkout',
        resource: 'browser:default',
      }),
      draft('ClientValidationCompleted', {
        taskId: 'T01',
        revision: REV,
        outcome: 'passed',
        reason: null,
        captureIds: [],
      }),
      ...['1', '2', '3'].map((n) =>
        draft('ArtifactStored', {
          artifactId: `X${n}`,
          kind: 'screenshot',
          key: `cases/${caseId}/${REV}/${n.repeat(64)}`,
          sha256: n.repeat(64),
          bytes: 10,
          contentType: 'image/png',
          revision: REV,
          captureId: null,
          leaseToken: null,
        }),
      ),
    ]);
    await Promise.all(burst.map((e) => intake.runtime.onCaseProgress(e)));
    const patches = h.discord.requests.filter(
      (r) => r.method === 'PATCH' && r.path.endsWith(`/messages/${statusId}`),
    );
    expect(patches.length - patchesBefore).toBeGreaterThanOrEqual(1);
    expect(patches.length - patchesBefore).toBeLessThan(burst.length);
    expect(status()?.content).toContain('Browser: checkout passed');
    expect(status()?.content).toContain('Evidence: 3 stored');

    // Edits keep at least the configured interval apart (Discord's edit limit).
    const times = patches.map((p) => p.at);
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(350);

    await feed('coordinator', [
      draft('CaseAwaitingReview', { receiptId: 'R01', confirmedSources: [sourceId] }),
    ]);
    expect(status()?.content).toContain('awaiting review');

    // One status message the whole way: the thread's message count never moved, the id is the same.
    expect(threadCount()).toBe(count);
    expect(status()?.id).toBe(statusId);
    expect(status()?.editedTimestamp).not.toBeNull();
    const statusPosts = h.discord.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path === `/channels/${m.id}/messages` &&
        String((r.body as { content?: string }).content).includes('live status'),
    );
    expect(statusPosts).toHaveLength(1);
  });
  /** A case with its status posted in its thread, and a way to move it. */
  async function caseWithStatus(caseId: string, content: string) {
    const m = h.discord.say({ authorId: h.ids.alice, channelId: h.ids.bugs, content });
    await eventually(async () => (await h.sourceEvents(m.id)).length === 2, { what: 'recorded' });
    const place = { guildId: h.discord.guildId, channelId: h.ids.bugs, threadId: null, messageId: m.id };
    const feed = async (producer: 'coordinator' | 'worker', events: ReturnType<typeof draft>[]) => {
      for (const e of await h.appendCase(caseId, producer, events)) await intake.runtime.onCaseProgress(e);
    };
    await feed('coordinator', [
      draft('CaseOpened', {
        sourceId: `discord-${m.id}`,
        place,
        reporterId: h.ids.alice,
        title: content,
        confidence: 1,
        reasons: [],
      }),
      draft('TaskAssigned', {
        taskId: 'T01',
        repository: 'shop',
        targetBranch: 'main',
        targetRevision: null,
        brief: content,
      }),
    ]);
    const status = () =>
      h.discord
        .messages(m.id)
        .find((x) => x.author.id === h.discord.botId && x.content.includes('live status'));
    await eventually(() => status()?.content.includes('Task `T01` assigned'), { what: 'status posted' });
    const attempt = () =>
      feed('worker', [
        draft('AttemptStarted', {
          taskId: 'T01',
          attemptId: 'A1',
          attempt: 1,
          route: { name: 'default', kind: 'normal' },
          fromCleanTree: true,
        }),
      ]);
    return { threadId: m.id, status, attempt };
  }

  it('reopens a thread Discord archived to edit the status there (an edit alone would be 50083)', async () => {
    const c = await caseWithStatus('C01ARCHSTATUS', 'search is slow');
    const before = c.status()?.content;
    h.discord.archiveThread(c.threadId);

    await c.attempt();
    await eventually(() => c.status()?.content !== before, { what: 'status edited' });
    expect(h.discord.threads().find((t) => t.id === c.threadId)?.archived).toBe(false);
    const reopen = h.discord.requests.filter(
      (r) => r.method === 'PATCH' && r.path === `/channels/${c.threadId}`,
    );
    expect(reopen).toHaveLength(1);
    expect(reopen[0]?.body).toEqual({ archived: false });
  });

  it('retries a status edit Discord refused with 30046 (too many edits to an old message) until it goes through', async () => {
    const c = await caseWithStatus('C01OLDSTATUS', 'cart empties');
    const before = c.status()?.content;
    const statusId = c.status()?.id as string;
    const fault = h.discord.inject({
      method: 'PATCH',
      path: `/channels/${c.threadId}/messages/${statusId}`,
      error: 'maxOldMessageEdits',
    });
    const [started] = await h.appendCase('C01OLDSTATUS', 'worker', [
      draft('AttemptStarted', {
        taskId: 'T01',
        attemptId: 'A1',
        attempt: 1,
        route: { name: 'default', kind: 'normal' },
        fromCleanTree: true,
      }),
    ]);
    if (!started) throw new Error('event not appended');

    // The handler fails as a dependency that is not there yet, so the event is delivered again.
    await expect(intake.runtime.onCaseProgress(started)).rejects.toBeInstanceOf(DependencyUnavailable);
    expect(fault.fired).toBe(1);
    expect(c.status()?.content).toBe(before);

    await intake.runtime.onCaseProgress(started);
    expect(c.status()?.content).not.toBe(before);
    expect(c.status()?.content).toContain('attempt 1 running');
  });

  it('leaves the status of a thread a moderator locked and archived as it is, without reopening it', async () => {
    const c = await caseWithStatus('C01LOCKSTATUS', 'login loops');
    const before = c.status()?.content;
    const edits = () =>
      h.discord.requests.filter(
        (r) => r.method === 'PATCH' && r.path === `/channels/${c.threadId}/messages/${c.status()?.id}`,
      );
    const editsBefore = edits().length;
    h.discord.archiveThread(c.threadId);
    h.discord.lockThread(c.threadId);

    await c.attempt();
    await eventually(() => edits().length === editsBefore + 1, { what: 'the refused edit' });
    expect(edits().at(-1)?.status).toBe(400);
    expect(c.status()?.content).toBe(before);
    expect(h.discord.threads().find((t) => t.id === c.threadId)?.archived).toBe(true);
    expect(h.discord.requests.some((r) => r.method === 'PATCH' && r.path === `/channels/${c.threadId}`)).toBe(
      false,
    );
  });
});
