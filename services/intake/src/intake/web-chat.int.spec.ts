import { existsSync } from 'node:fs';
import { eventually } from '@caseloop/testing';
import { Browser, chromium } from 'playwright-core';
import { IntakeHarness, StartedIntake } from '../../test/intake.fixture';

jest.setTimeout(120_000);

const CHROMIUM = '/usr/bin/chromium';
const describeWithBrowser = existsSync(CHROMIUM) ? describe : describe.skip;
if (!existsSync(CHROMIUM))
  console.warn(`web chat test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describeWithBrowser('a report typed in the local Discord web chat page reaches intake', () => {
  let h: IntakeHarness;
  let intake: StartedIntake;
  let browser: Browser;

  beforeAll(async () => {
    h = await IntakeHarness.create();
    intake = await h.start();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.cleanup();
  });

  const stored = async (content: string) => {
    const m = await eventually(() => h.discord.messages(h.ids.bugs).find((x) => x.content === content), {
      what: `"${content}" stored`,
    });
    if (!m) throw new Error('unreachable');
    return m;
  };

  it('is recorded as a source and the page shows the 👀 read receipt; a stranger typing there is dropped', async () => {
    const page = await browser.newPage();
    await page.goto(h.discord.sandboxUrl);
    await page.locator('button[data-channel="bugs"]').click();
    await page.locator('#status.live').waitFor();
    await page.selectOption('#user', h.ids.bob);
    await page.fill('#text', 'the coupon field accepts expired codes');
    await page.press('#text', 'Enter');

    const typed = await stored('the coupon field accepts expired codes');
    await eventually(async () => (await h.sourceEvents(typed.id)).length === 2, {
      what: 'recorded and receipted',
      timeoutMs: 20_000,
    });
    expect((await h.sourceEvents(typed.id))[0]).toMatchObject({
      type: 'SourceReceived',
      data: { authorId: h.ids.bob, via: 'gateway', content: 'the coupon field accepts expired codes' },
    });
    // The page names the reaction as well as drawing it (machines without an emoji font show `:eyes:`).
    const eyes = page.locator(`[data-message-id="${typed.id}"] .reaction[data-emoji="👀"]`);
    await eyes.waitFor();
    await expect(eyes.locator('.count').textContent()).resolves.toBe('1');
    await expect(eyes.getAttribute('title')).resolves.toBe(':eyes: by caseloop');

    await page.selectOption('#user', h.ids.sam);
    await page.fill('#text', 'let me in');
    await page.press('#text', 'Enter');
    const stranger = await stored('let me in');
    await eventually(async () => (await h.sourceEvents(stranger.id))[0]?.type === 'SourceDropped', {
      what: 'stranger dropped',
      timeoutMs: 20_000,
    });
    expect(h.discord.reactions(stranger.id)).toEqual([]);
    expect(await intake.registry.getSingleMetricAsString('caseloop_intake_dropped_total')).toContain(
      'reason="author_not_listed"',
    );
    await page.close();
  });
});
