import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { draft } from '@caseloop/contracts';
import { defaultSeed, LocalDiscord } from '@caseloop/discord-sandbox';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { bootstrapService, RunningService } from '@caseloop/platform';
import { eventually, NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { chromium } from 'playwright-core';
import { Client } from 'pg';
import { monitorConfig, MonitorConfig } from '../../../monitor/src/monitor.config';
import { MonitorModule } from '../../../monitor/src/monitor.module';
import { consoleConfig, ConsoleConfig } from '../console.config';
import { ConsoleModule } from '../console.module';
import { SESSION_COOKIE } from './console-auth';

jest.setTimeout(120_000);

const TITLE = 'Checkout button does nothing on Safari 17';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A browser without a browser: follows nothing by itself and keeps the cookies each origin sets. */
class CookieJar {
  readonly cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = (pair ?? '').indexOf('=');
      const name = (pair ?? '').slice(0, eq);
      const value = (pair ?? '').slice(eq + 1);
      if (/Max-Age=0/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  async get(url: string, headers: Record<string, string> = {}): Promise<Response> {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: this.header(), ...headers } });
    this.take(res);
    return res;
  }
}

describe('signing in to the console with the local Discord (OAuth2 code grant with PKCE)', () => {
  const namespace = uniqueSuffix('cs');
  const stream = `T${namespace.toUpperCase()}`;
  const schema = uniqueSuffix('cs');
  const caseId = `case-${namespace}`;
  let dir = '';
  let discord: LocalDiscord;
  let ledger: Ledger;
  let monitor: RunningService<MonitorConfig>;
  let app: RunningService<ConsoleConfig>;
  let consoleUrl = '';

  const secretFile = async (name: string, value: string) => {
    const file = join(dir, name);
    await writeFile(file, value);
    await chmod(file, 0o600);
    return file;
  };
  const platformEnv = (name: string) => ({
    CASELOOP_NAMESPACE: namespace,
    LEDGER_STREAM: stream,
    NATS_URL,
    HTTP_HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    CONSUMER_NAME: `${name}_${namespace}`,
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'console-sign-in-'));
    ledger = await connectLedger({ servers: NATS_URL, namespace, stream, name: 'console-sign-in-test' });
    await ledger.provision();
    discord = await LocalDiscord.start(defaultSeed());
    const port = await freePort();
    consoleUrl = `http://127.0.0.1:${port}`;
    discord.oauth2.addRedirectUri(`${consoleUrl}/auth/callback`);
    const binding = join(dir, 'binding.yaml');
    await writeFile(
      binding,
      JSON.stringify({
        guildId: discord.guildId,
        channels: [{ id: discord.channelId('bugs'), mode: 'open' }],
        reporters: [discord.userId('alice'), discord.userId('bob')],
        reviewers: [discord.userId('rita')],
        consoleRoles: [discord.roleId('reporters')],
        limits: { inboundMaxChars: 2000, reportsPerDayPerUser: 50, replyChunkSize: 2000 },
      }),
    );
    monitor = await bootstrapService({
      name: 'monitor',
      config: monitorConfig,
      module: (c) => MonitorModule.forRoot(c),
      consumer: false,
      env: {
        ...platformEnv('monitor'),
        HTTP_PORT: '0',
        CASELOOP_DATABASE_URL: PG_URL,
        CASELOOP_DB_SCHEMA: schema,
        MONITOR_HEARTBEAT_MS: '0',
      },
    });
    app = await bootstrapService({
      name: 'console',
      config: consoleConfig,
      module: (c) => ConsoleModule.forRoot(c),
      consumer: false,
      env: {
        ...platformEnv('console'),
        HTTP_PORT: String(port),
        CASELOOP_DATABASE_URL: PG_URL,
        CASELOOP_DB_SCHEMA: schema,
        CONSOLE_PUBLIC_URL: consoleUrl,
        CONSOLE_DISCORD_CLIENT_ID: discord.applicationId,
        CONSOLE_DISCORD_CLIENT_SECRET_FILE: await secretFile('client-secret', discord.oauth2.clientSecret),
        CONSOLE_DISCORD_API_URL: `${discord.apiUrl}/v10`,
        CONSOLE_DISCORD_AUTHORIZE_URL: `${discord.url}/oauth2/authorize`,
        CONSOLE_BINDING_FILE: binding,
        CONSOLE_SESSION_SECRET_FILE: await secretFile('session-secret', randomBytes(32).toString('hex')),
        // Membership is asked of Discord again a second after it was last confirmed.
        CONSOLE_MEMBERSHIP_RECHECK_S: '1',
      },
    });
    await ledger.store.handle({
      aggregate: 'case',
      aggregateId: caseId,
      producer: 'coordinator',
      commandId: `open-${caseId}`,
      causationId: null,
      correlationId: caseId,
      occurredAt: new Date().toISOString(),
      consistency: 'producer',
      decide: () => [
        draft('CaseOpened', {
          sourceId: 'discord-300000000000000001',
          place: {
            guildId: discord.guildId,
            channelId: discord.channelId('bugs'),
            threadId: null,
            messageId: '300000000000000001',
          },
          reporterId: discord.userId('alice'),
          title: TITLE,
          confidence: 0,
          reasons: ['no open case shares a term'],
        }),
      ],
    });
    const pg = new Client({ connectionString: PG_URL });
    await pg.connect();
    try {
      await eventually(
        async () => {
          const r = await pg
            .query(`select 1 from "${schema}".cases where case_id = $1`, [caseId])
            .catch(() => null);
          return r && r.rowCount === 1 ? true : null;
        },
        { timeoutMs: 30_000, intervalMs: 200, what: 'the case projected' },
      );
    } finally {
      await pg.end();
    }
  });

  afterAll(async () => {
    for (const svc of [app, monitor]) await svc?.close().catch(() => undefined);
    const pg = new Client({ connectionString: PG_URL });
    await pg.connect();
    await pg.query(`drop schema if exists "${schema}" cascade`);
    await pg.end();
    for (const s of [stream, `${stream}_DLQ`]) await ledger?.jsm.streams.delete(s).catch(() => undefined);
    await ledger?.close();
    await discord?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The whole round trip: console → Discord's consent (approved for `user`) → callback → the page asked for. */
  async function signIn(user: string, jar = new CookieJar()): Promise<{ jar: CookieJar; page: Response }> {
    const asked = await jar.get(`${consoleUrl}/cases/${caseId}`);
    expect(asked.status).toBe(302);
    const signInUrl = new URL(asked.headers.get('location') as string, consoleUrl);
    expect(signInUrl.pathname).toBe('/auth/sign-in');
    const toDiscord = await jar.get(signInUrl.toString());
    expect(toDiscord.status).toBe(302);
    const authorize = new URL(toDiscord.headers.get('location') as string);
    expect(authorize.origin).toBe(discord.url);
    expect(authorize.searchParams.get('scope')).toBe('identify guilds.members.read');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    discord.oauth2.autoApprove(discord.userId(user));
    const back = await jar.get(authorize.toString());
    expect(back.status).toBe(302);
    const callback = new URL(back.headers.get('location') as string);
    expect(`${callback.origin}${callback.pathname}`).toBe(`${consoleUrl}/auth/callback`);
    expect(callback.searchParams.get('state')).toBe(authorize.searchParams.get('state'));
    const landed = await jar.get(callback.toString());
    expect(landed.status).toBe(302);
    expect(landed.headers.get('location')).toBe(`/cases/${caseId}`);
    expect(jar.cookies.has(SESSION_COOKIE)).toBe(true);
    return { jar, page: await jar.get(`${consoleUrl}/cases/${caseId}`) };
  }

  it('sends a visitor who is not signed in to Discord, and answers scripts 401', async () => {
    const res = await fetch(`${consoleUrl}/cases`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/auth/sign-in?return=%2Fcases');
    expect((await fetch(`${consoleUrl}/cases.json`, { redirect: 'manual' })).status).toBe(401);
    expect((await fetch(`${consoleUrl}/healthz`)).status).toBe(200);
  });

  it('lets a reviewer of the binding sign in and see the case', async () => {
    const { page } = await signIn('rita');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain(TITLE);
    const token = discord.oauth2.requests.find((r) => r.path.endsWith('/oauth2/token') && r.status === 200);
    expect(token).toBeDefined();
    expect(
      discord.oauth2.requests.some((r) => r.path.endsWith(`/users/@me/guilds/${discord.guildId}/member`)),
    ).toBe(true);
  });

  it('lets a member holding a role the binding names in', async () => {
    const { page } = await signIn('alice');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(TITLE);
  });

  it('asks Discord again once the re-check is due, and refuses a member who lost the role from then on', async () => {
    const alice = discord.userId('alice');
    const memberRoute = `/users/@me/guilds/${discord.guildId}/member`;
    const asked = () => discord.oauth2.requests.filter((r) => r.path.endsWith(memberRoute));
    const { jar, page } = await signIn('alice');
    expect(page.status).toBe(200);
    try {
      // Still a member with the role: Discord is asked with her token, and the session renewed.
      const before = asked().length;
      await new Promise((r) => setTimeout(r, 1_100));
      const still = await jar.get(`${consoleUrl}/cases/${caseId}`);
      expect(still.status).toBe(200);
      expect(await still.text()).toContain(TITLE);
      expect(asked().length).toBe(before + 1);
      expect(asked().at(-1)?.status).toBe(200);
      expect(still.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(true);

      // A server admin takes the role away: the next request after the re-check is refused.
      discord.setMemberRoles(alice, []);
      await new Promise((r) => setTimeout(r, 1_100));
      const refused = await jar.get(`${consoleUrl}/cases/${caseId}`);
      expect(refused.status).toBe(403);
      expect(await refused.text()).not.toContain(TITLE);
      expect(asked().length).toBe(before + 2);
      // And stays refused, without asking Discord again.
      await new Promise((r) => setTimeout(r, 1_100));
      expect((await jar.get(`${consoleUrl}/cases/${caseId}.json`)).status).toBe(403);
      expect((await jar.get(`${consoleUrl}/cases`)).status).toBe(403);
      expect(asked().length).toBe(before + 2);
    } finally {
      discord.setMemberRoles(alice, [discord.roleId('reporters')]);
    }
    // Signing in again asks Discord afresh: with the role back, she is in.
    expect((await signIn('alice')).page.status).toBe(200);
  });

  it('refuses a signed-in stranger with 403, and shows them no case', async () => {
    const { jar, page } = await signIn('sam');
    expect(page.status).toBe(403);
    const body = await page.text();
    expect(body).not.toContain(TITLE);
    expect((await jar.get(`${consoleUrl}/cases.json`)).status).toBe(403);
  });

  it('refuses a tampered session cookie', async () => {
    const { jar, page } = await signIn('sam');
    expect(page.status).toBe(403);
    const [payload, mac] = (jar.cookies.get(SESSION_COOKIE) as string).split('.');
    const value = JSON.parse(Buffer.from(payload as string, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    const forged = Buffer.from(JSON.stringify({ ...value, admitted: true })).toString('base64url');
    jar.cookies.set(SESSION_COOKIE, `${forged}.${mac}`);
    const res = await jar.get(`${consoleUrl}/cases/${caseId}`);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toMatch(/^\/auth\/sign-in/);
    expect((await jar.get(`${consoleUrl}/cases/${caseId}.json`)).status).toBe(401);
  });

  it('has the local Discord refuse a wrong code_verifier, and a code used twice', async () => {
    const redirectUri = `${consoleUrl}/auth/callback`;
    const verifier = randomBytes(48).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    discord.oauth2.autoApprove(discord.userId('rita'));
    const authorize = new URL(`${discord.url}/oauth2/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: discord.applicationId,
      scope: 'identify guilds.members.read',
      state: 'st',
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString();
    const code = async () =>
      new URL(
        (await fetch(authorize, { redirect: 'manual' })).headers.get('location') as string,
      ).searchParams.get('code') as string;
    const exchange = (c: string, v: string) =>
      fetch(`${discord.apiUrl}/oauth2/token`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${Buffer.from(`${discord.applicationId}:${discord.oauth2.clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: c,
          redirect_uri: redirectUri,
          code_verifier: v,
        }).toString(),
      });
    // Without the client secret the application must be a public client (it is not, here).
    const noSecret = await fetch(`${discord.apiUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: discord.applicationId,
        code: await code(),
        redirect_uri: redirectUri,
        code_verifier: verifier,
      }).toString(),
    });
    expect(noSecret.status).toBe(401);
    expect(await noSecret.json()).toEqual({ error: 'invalid_client' });
    const wrong = await exchange(await code(), randomBytes(48).toString('base64url'));
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    const good = await code();
    const ok = await exchange(good, verifier);
    expect(ok.status).toBe(200);
    const token = (await ok.json()) as { access_token: string; token_type: string; scope: string };
    expect(token).toMatchObject({ token_type: 'Bearer', scope: 'identify guilds.members.read' });
    const me = await fetch(`${discord.apiUrl}/v10/users/@me`, {
      headers: { Authorization: `Bearer ${token.access_token}` },
    });
    expect(((await me.json()) as { id: string }).id).toBe(discord.userId('rita'));
    expect((await exchange(good, verifier)).status).toBe(400);
  });

  it('refuses an answer from Discord that does not belong to this browser’s sign-in', async () => {
    const jar = new CookieJar();
    await jar.get(`${consoleUrl}/auth/sign-in`);
    const res = await jar.get(`${consoleUrl}/auth/callback?code=whatever&state=not-ours`);
    expect(res.status).toBe(400);
    expect(jar.cookies.has(SESSION_COOKIE)).toBe(false);
  });

  it('signs a reviewer in through the consent screen in Chromium', async () => {
    discord.oauth2.autoApprove(null);
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu'],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`${consoleUrl}/cases`);
      expect(new URL(page.url()).origin).toBe(discord.url);
      await page.getByLabel('rita').check();
      await page.getByRole('button', { name: 'Authorize' }).click();
      await page.waitForURL(`${consoleUrl}/cases`);
      expect(await page.locator('body').innerText()).toContain(TITLE);
      expect(await page.locator('script').count()).toBe(0);
      // Signed in as Rita; signing out ends the session.
      expect(await page.locator('header form.viewer').innerText()).toContain('Rita');
      await page.screenshot({
        path: join(process.env.CASE_PAGE_SCREENSHOTS ?? tmpdir(), 'console-signed-in.png'),
      });
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(`${consoleUrl}/auth/sign-out`);
      const cookies = await page.context().cookies(consoleUrl);
      expect(cookies.map((c) => c.name)).not.toContain(SESSION_COOKIE);
      await page.goto(`${consoleUrl}/cases`);
      expect(new URL(page.url()).origin).toBe(discord.url);
    } finally {
      await browser.close();
    }
  });
});
