import { AttachmentBuilder, ButtonStyle, ComponentType, type TextChannel } from 'discord.js';
import { connectClient, destroyClient } from '../src/discord-client.fixture';
import { LocalDiscord } from '../src/local-discord';
import { defaultSeed } from '../src/seed';
import { type ContractFailure, DiscordContract } from './openapi-contract';

jest.setTimeout(60_000);

/**
 * Every route the local Discord serves, driven by a real discord.js client and by plain HTTP, and
 * every request and answer checked against Discord's published OpenAPI description (the committed
 * subset in this folder). Error answers (404, 400, 429) are checked against their documented shape too.
 */
describe("the local Discord against Discord's OpenAPI description", () => {
  const contract = new DiscordContract();
  let discord: LocalDiscord;
  const failures: ContractFailure[] = [];
  const answered = new Map<string, Set<number>>();

  beforeAll(async () => {
    discord = await LocalDiscord.start({ ...defaultSeed(), rateLimit: { limit: 1000, windowMs: 1000 } });
    discord.onRestExchange((record, responseBody, requestContentType) => {
      if (!record.route) return;
      const key = `${record.method} ${record.route}`;
      answered.set(key, (answered.get(key) ?? new Set()).add(record.status));
      failures.push(
        ...contract.check({
          method: record.method,
          template: record.route,
          status: record.status,
          requestBody: record.body,
          requestContentType,
          responseBody,
        }),
      );
    });
  });
  afterAll(async () => {
    await discord?.close();
  });

  const api = async (method: string, path: string, body?: unknown, auth = true): Promise<Response> =>
    fetch(`${discord.apiUrl}/v10${path}`, {
      method,
      headers: {
        ...(auth ? { Authorization: `Bot ${discord.token}` } : {}),
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const json = async <T>(res: Promise<Response>): Promise<T> => (await (await res).json()) as T;

  it('serves every route as Discord describes it: 0 failures', async () => {
    const client = await connectClient(discord);
    try {
      const g = discord.guildId;
      const app = discord.applicationId;
      const bugs = discord.channelId('bugs');
      const channel = client.channels.cache.get(bugs) as TextChannel;

      // What intake and discord.js call.
      await api('GET', '/gateway', undefined, false);
      await api('GET', '/users/@me');
      await api('GET', `/users/${discord.userId('alice')}`);
      await api('GET', '/applications/@me');
      await api('GET', `/guilds/${g}`);
      await api('GET', `/guilds/${g}?with_counts=true`);
      await api('GET', `/guilds/${g}/channels`);
      await api('GET', `/guilds/${g}/roles`);
      await api('GET', `/guilds/${g}/members?limit=10`);
      await api('GET', `/guilds/${g}/members/${discord.userId('rita')}`);
      await api('GET', `/channels/${bugs}`);
      const command = {
        name: 'caseloop',
        description: 'Decide on the case',
        options: [{ type: 1, name: 'approve', description: 'Approve' }],
      };
      await api('PUT', `/applications/${app}/guilds/${g}/commands`, [command]);
      await api('GET', `/applications/${app}/guilds/${g}/commands`);
      await api('PUT', `/applications/${app}/commands`, [command]);
      await api('GET', `/applications/${app}/commands`);

      const report = discord.say({
        authorId: discord.userId('alice'),
        channelId: bugs,
        content: 'it crashes',
      });
      await api('PUT', `/channels/${bugs}/messages/${report.id}/reactions/${encodeURIComponent('👀')}/@me`);
      await api('GET', `/channels/${bugs}/messages/${report.id}/reactions/${encodeURIComponent('👀')}`);
      await api(
        'DELETE',
        `/channels/${bugs}/messages/${report.id}/reactions/${encodeURIComponent('👀')}/@me`,
      );
      await api('POST', `/channels/${bugs}/typing`);
      const thread = await json<{ id: string }>(
        api('POST', `/channels/${bugs}/messages/${report.id}/threads`, {
          name: 'Case C01',
          auto_archive_duration: 10080,
        }),
      );
      // `type` left out means a private thread (Start Thread without Message); 11 asks for a public one.
      await api('POST', `/channels/${bugs}/threads`, {
        name: 'a loose thread',
        type: 11,
        auto_archive_duration: 1440,
      });
      await api('POST', `/channels/${bugs}/threads`, { name: 'a private thread' });
      await api('GET', `/guilds/${g}/threads/active`);
      await api('GET', `/channels/${thread.id}`);

      const posted = await json<{ id: string }>(
        api('POST', `/channels/${thread.id}/messages`, {
          content: 'Recorded as case C01.',
          nonce: 'c-contract-1',
          enforce_nonce: true,
          allowed_mentions: { parse: [] },
          message_reference: { message_id: report.id, fail_if_not_exists: false },
          embeds: [{ title: 'Status', description: 'checks 3 of 5' }],
          components: [
            {
              type: 1,
              components: [
                { type: 2, style: 3, custom_id: 'caseloop:approve:R1', label: 'Approve' },
                { type: 2, style: 2, custom_id: 'caseloop:revise:R1', label: 'Request changes' },
                { type: 2, style: 4, custom_id: 'caseloop:reject:R1', label: 'Reject' },
              ],
            },
          ],
        }),
      );
      await api('PATCH', `/channels/${thread.id}/messages/${posted.id}`, {
        content: 'Recorded as case C01. Checks 4 of 5.',
        embeds: [{ title: 'Status', description: 'checks 4 of 5', color: 0x5865f2 }],
      });
      await api('GET', `/channels/${thread.id}/messages/${posted.id}`);
      await api('GET', `/channels/${thread.id}/messages?limit=50`);
      await api('GET', `/channels/${thread.id}/messages?after=${report.id}&limit=100`);
      // Modify Thread: an archived case thread is unarchived before its status is edited; an edit
      // while archived is 50083.
      discord.archiveThread(thread.id);
      await api('PATCH', `/channels/${thread.id}/messages/${posted.id}`, { content: 'while archived' });
      await api('PATCH', `/channels/${thread.id}`, { archived: false });

      // discord.js: a multipart upload with payload_json, files[n] and attachments, then a delete.
      const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
      const withFile = await channel.send({
        content: 'the capture',
        files: [new AttachmentBuilder(png, { name: 'capture.png' })],
        components: [
          {
            type: ComponentType.ActionRow,
            components: [
              {
                type: ComponentType.Button,
                style: ButtonStyle.Link,
                url: 'https://example.com/x',
                label: 'Open',
              },
            ],
          },
        ],
      });
      await withFile.delete();

      // Interactions: a slash command answered ephemerally; a button answered with a modal; the
      // modal answered with a deferred update, then the original edited; a follow-up.
      const slash = discord.slash({
        authorId: discord.userId('rita'),
        channelId: thread.id,
        name: 'caseloop',
        subcommand: 'approve',
      });
      await fetch(
        `${discord.apiUrl}/v10/interactions/${slash.id}/${slash.token}/callback?with_response=true`,
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({
            type: 4,
            data: { content: 'Recorded: approve.', flags: 64, allowed_mentions: { parse: [] } },
          }),
        },
      );
      const click = discord.click({
        authorId: discord.userId('rita'),
        messageId: posted.id,
        customId: 'caseloop:revise:R1',
      });
      await fetch(`${discord.apiUrl}/v10/interactions/${click.id}/${click.token}/callback`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          type: 9,
          data: {
            custom_id: 'caseloop:revise-text:R1',
            title: 'Request changes',
            components: [
              {
                type: 1,
                components: [
                  {
                    type: 4,
                    custom_id: 'text',
                    label: 'What should change?',
                    style: 2,
                    min_length: 1,
                    max_length: 4000,
                  },
                ],
              },
            ],
          },
        }),
      });
      const submit = discord.submitModal({
        authorId: discord.userId('rita'),
        interactionId: click.id,
        values: { text: 'keep the header row' },
      });
      await fetch(
        `${discord.apiUrl}/v10/interactions/${submit.id}/${submit.token}/callback?with_response=true`,
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: 6 }),
        },
      );
      await fetch(`${discord.apiUrl}/v10/webhooks/${app}/${submit.token}/messages/@original`, {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ content: 'Revision requested.', components: [] }),
      });
      await fetch(`${discord.apiUrl}/v10/webhooks/${app}/${submit.token}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ content: 'Task resumes.', flags: 64 }),
      });
      const deferred = discord.slash({
        authorId: discord.userId('rita'),
        channelId: thread.id,
        name: 'caseloop',
        subcommand: 'approve',
      });
      await fetch(
        `${discord.apiUrl}/v10/interactions/${deferred.id}/${deferred.token}/callback?with_response=true`,
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ type: 5, data: { flags: 64 } }),
        },
      );

      // Permission overwrites: discord.js edits and deletes one once the bot's role may manage
      // them; without MANAGE_ROLES, and for what the bot does not hold, Discord refuses (403).
      const denied = await api('PUT', `/channels/${bugs}/permissions/${g}`, {
        type: 0,
        allow: '0',
        deny: '64',
      });
      expect(denied.status).toBe(403);
      discord.setRolePermissions(discord.botRoleId, [...discord.botPermissionsIn(bugs), 'MANAGE_ROLES']);
      await channel.permissionOverwrites.edit(g, { AddReactions: false, AttachFiles: false });
      await api('PUT', `/channels/${bugs}/permissions/${discord.userId('sam')}`, {
        type: 1,
        allow: 64,
        deny: null,
      });
      expect(
        (await api('PUT', `/channels/${bugs}/permissions/${g}`, { type: 0, allow: String(1n << 3n) })).status,
      ).toBe(403); // ADMINISTRATOR: the bot does not hold it
      await api('GET', `/channels/${bugs}`);
      await api('GET', `/guilds/${g}/channels`);
      await channel.permissionOverwrites.delete(g);
      await api('DELETE', `/channels/${bugs}/permissions/${discord.userId('sam')}`);
      expect((await api('PUT', `/channels/${thread.id}/permissions/${g}`, { type: 0 })).status).toBe(400);

      // Documented error answers.
      await api('GET', `/channels/${thread.id}/messages/${report.id}`); // 404 10008
      await api('POST', `/channels/${thread.id}/messages`, { content: '' }); // 400 50006
      await api('POST', `/channels/${thread.id}/messages`, { content: 'x'.repeat(2001) }); // 400 50035
      await api('DELETE', `/channels/${thread.id}/messages/${posted.id}`);
      await api('POST', `/channels/${thread.id}/messages`, {
        content: 'Recorded as case C01.',
        nonce: 'c-contract-1',
        enforce_nonce: true,
      }); // 404 10008: the nonce's message was deleted
      discord.inject({ method: 'GET', path: `/channels/${bugs}`, status: 429, retryAfterMs: 1200 });
      await api('GET', `/channels/${bugs}`);
    } finally {
      await destroyClient(client);
    }

    const missing = discord
      .restRoutes()
      .map((r) => `${r.method} ${r.template}`)
      .filter((key) => ![...(answered.get(key) ?? [])].some((s) => s >= 200 && s < 300));
    expect(missing).toEqual([]);
    expect(failures).toEqual([]);
    const statuses = [...answered.values()].flatMap((s) => [...s]);
    expect(statuses).toEqual(expect.arrayContaining([200, 201, 204, 400, 403, 404, 429]));
  });

  it('fails what Discord would not send (the validator is not a rubber stamp)', () => {
    const base = {
      method: 'GET',
      template: '/channels/:channel/messages/:message',
      status: 200,
      requestBody: null,
      requestContentType: null,
    };
    const message = discord.rawMessages(discord.channelId('bugs'))[0] as Record<string, unknown>;
    expect(contract.check({ ...base, responseBody: message })).toEqual([]);
    const { author: _author, ...withoutAuthor } = message;
    expect(contract.check({ ...base, responseBody: withoutAuthor })[0]?.problem).toMatch(/author/);
    expect(contract.check({ ...base, responseBody: { ...message, id: 'not-a-snowflake' } })).not.toEqual([]);
    expect(
      contract.check({ ...base, template: '/channels/:channel/threads/active', responseBody: {} })[0]?.part,
    ).toBe('route');
    expect(
      contract.check({ ...base, status: 429, responseBody: { message: 'slow down', retry_after: 1 } }),
    ).not.toEqual([]);
  });
});
