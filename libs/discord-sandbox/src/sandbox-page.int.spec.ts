import { existsSync } from 'node:fs';
import { Events, type Message } from 'discord.js';
import { chromium, type Browser, type Page } from 'playwright-core';
import { eventually } from '@caseloop/testing';
import { connectClient, destroyClient } from './discord-client.fixture';
import { LocalDiscord } from './local-discord';
import { defaultSeed } from './seed';

jest.setTimeout(90_000);

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  console.warn(`sandbox page browser test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
}
const describeWithBrowser = haveChromium ? describe : describe.skip;

describeWithBrowser('the sandbox web chat page in Chromium', () => {
  let discord: LocalDiscord;
  let client: Awaited<ReturnType<typeof connectClient>>;
  let browser: Browser;
  let page: Page;
  const received: Message[] = [];
  const waitForMessage = async (content: string): Promise<Message> => {
    await eventually(() => received.some((m) => m.content === content), {
      what: `discord.js saw "${content}"`,
    });
    return received.find((m) => m.content === content) as Message;
  };

  beforeAll(async () => {
    discord = await LocalDiscord.start(defaultSeed());
    client = await connectClient(discord);
    // A minimal bot: acknowledge human messages with a reply and 👀, and open a thread on request.
    client.on(Events.MessageCreate, (message) => {
      if (message.author.bot) return;
      received.push(message);
      void (async () => {
        await message.react('👀');
        await message.reply({
          content: `Got it, ${message.author.username}.`,
          allowedMentions: { parse: [] },
        });
        if (message.content.includes('thread please') && !message.channel.isThread())
          await message.startThread({ name: 'case: thread please' });
      })();
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu'],
    });
    page = await browser.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await destroyClient(client);
    await discord?.close();
  });

  it('posts as the chosen user, shows the bot reply and the reaction live, and never renders message HTML', async () => {
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(discord.sandboxUrl);
    await page.locator('button[data-channel="bugs"]').waitFor();
    await page.locator('#status.live').waitFor();
    const bob = discord.userId('bob');
    await page.selectOption('#user', bob);

    const hostile = 'Export fails <b>bold</b> <img src=x onerror="window.__pwned=1">';
    await page.fill('#text', hostile);
    await page.press('#text', 'Enter');

    const fromBob = await waitForMessage(hostile);
    expect(fromBob.author.id).toBe(bob);
    expect(fromBob.channelId).toBe(discord.channelId('bugs'));

    const typed = page.locator(`[data-message-id="${fromBob.id}"]`);
    // Named as well as drawn: without an emoji font the glyph would be an empty box.
    const eyes = typed.locator('.reaction[data-emoji="👀"]');
    await eyes.waitFor();
    await expect(eyes.locator('.count').textContent()).resolves.toBe('1');
    await expect(eyes.getAttribute('title')).resolves.toBe(':eyes: by caseloop');
    await expect(eyes.locator('.emoji').textContent()).resolves.toMatch(/^(👀|:eyes:)$/);
    await page.locator('.msg .content', { hasText: 'Got it, bob.' }).waitFor();
    await expect(typed.locator('.content').textContent()).resolves.toBe(hostile);
    expect(await typed.locator('.content b, .content img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(pageErrors).toEqual([]);
  });

  it('renders the markdown a bot writes from DOM nodes; a script, an image or a javascript: link in it stays inert', async () => {
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    const fence = '`'.repeat(3);
    const content = [
      '# Receipt',
      '## Checks',
      '### Small print',
      '**Outcome:** PR ready, *checked* and _twice_, `a <b>code</b> span`',
      '- first `item`',
      '- [evidence](<https://evidence.example/e/1>), <https://example.org/x> and https://example.com/y.',
      '> quoted **bold**',
      `${fence}js`,
      'const x = "<img src=x onerror=window.pwnedMd=2>";',
      fence,
      '[bad](javascript:window.pwnedMd=3) <script>window.pwnedMd=4</script> <img src=x onerror="window.pwnedMd=5"> ✅ done',
    ].join('\n');
    const said = discord.say({
      authorId: discord.userId('alice'),
      channelId: discord.channelId('bugs'),
      content,
    });
    await page.locator('button[data-channel="bugs"]').click();
    const body = page.locator(`[data-message-id="${said.id}"] .content`);
    await body.locator('.md-pre').waitFor();

    await expect(body.locator('.md-h1').textContent()).resolves.toBe('Receipt');
    await expect(body.locator('.md-h2').textContent()).resolves.toBe('Checks');
    await expect(body.locator('.md-h3').textContent()).resolves.toBe('Small print');
    await expect(body.locator('strong').allTextContents()).resolves.toEqual(['Outcome:', 'bold']);
    await expect(body.locator('em').allTextContents()).resolves.toEqual(['checked', 'twice']);
    await expect(body.locator('.md-code').allTextContents()).resolves.toEqual(['a <b>code</b> span', 'item']);
    await expect(body.locator('ul.md-list > li').count()).resolves.toBe(2);
    await expect(body.locator('.md-quote strong').textContent()).resolves.toBe('bold');
    const links = await body
      .locator('a')
      .evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('rel')]));
    expect(links).toEqual([
      ['evidence', 'https://evidence.example/e/1', 'noopener noreferrer nofollow'],
      ['https://example.org/x', 'https://example.org/x', 'noopener noreferrer nofollow'],
      ['https://example.com/y', 'https://example.com/y', 'noopener noreferrer nofollow'],
    ]);
    const code = body.locator('.md-pre code');
    await expect(code.getAttribute('data-language')).resolves.toBe('js');
    await expect(code.textContent()).resolves.toBe('const x = "<img src=x onerror=window.pwnedMd=2>";');
    await expect(body.locator('.md-text').last().textContent()).resolves.toMatch(
      /^\[bad\]\(javascript:window.pwnedMd=3\) <script>window.pwnedMd=4<\/script> <img src=x onerror="window.pwnedMd=5"> (✅|✔) done$/,
    );
    await expect(body.locator('.emoji[data-emoji="✅"]').getAttribute('title')).resolves.toBe(
      ':white_check_mark:',
    );
    expect(await body.locator('script, img, b, [onerror]').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { pwnedMd?: number }).pwnedMd)).toBeUndefined();
    expect(pageErrors).toEqual([]);
  });

  it('shows a thread the bot opens and posts into it as a reviewer', async () => {
    await page.fill('#text', 'thread please');
    await page.press('#text', 'Enter');
    const report = await waitForMessage('thread please');
    const threadButton = page.locator(`button[data-thread="${report.id}"]`);
    await threadButton.waitFor();
    await threadButton.click();
    await page.locator('#title', { hasText: 'case: thread please' }).waitFor();

    await page.selectOption('#user', discord.userId('rita'));
    await page.fill('#text', 'approve');
    await page.press('#text', 'Enter');
    const inThread = await waitForMessage('approve');
    expect(inThread.channelId).toBe(report.id);
    expect(inThread.author.username).toBe('rita');
    await page.locator('.msg .content', { hasText: 'Got it, rita.' }).waitFor();
  });

  it('shows the bot typing and lets a user start a thread on a message', async () => {
    const bugs = discord.channelId('bugs');
    await page.locator('button[data-channel="bugs"]').click();
    const channel = client.channels.cache.get(bugs);
    if (!channel?.isTextBased() || channel.isDMBased()) throw new Error('bugs is not a guild text channel');
    await channel.sendTyping();
    await page.locator('#typing', { hasText: 'caseloop is typing…' }).waitFor();

    const said = discord.say({
      authorId: discord.userId('alice'),
      channelId: bugs,
      content: 'no thread on this one yet',
    });
    // Wait for the bot's reply so the list is not re-rendered under the pointer.
    await page.locator('.msg .content', { hasText: 'Got it, alice.' }).waitFor();
    await page.selectOption('#user', discord.userId('alice'));
    const row = page.locator(`[data-message-id="${said.id}"]`);
    await row.hover();
    await row.locator('.actions button').click();
    await page.locator('#title', { hasText: 'no thread on this one yet' }).waitFor();
    expect(discord.threads().find((t) => t.id === said.id)?.ownerId).toBe(discord.userId('alice'));
  });
});
