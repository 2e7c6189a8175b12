import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ServiceProcess } from '@caseloop/stack';
import { eventually, NATS_URL } from '@caseloop/testing';
import { stringify } from 'yaml';
import { IntakeHarness } from '../test/intake.fixture';

jest.setTimeout(180_000);

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });

/** The intake service as its own OS process, SIGKILLed mid-step and started again. */
describe('intake killed with SIGKILL between steps', () => {
  let h: IntakeHarness;
  let env: Record<string, string>;
  const procs: ServiceProcess[] = [];

  beforeAll(async () => {
    h = await IntakeHarness.create();
    const bindingPath = join(h.dir, 'binding.yaml');
    writeFileSync(bindingPath, stringify(h.binding));
    env = {
      CASELOOP_NAMESPACE: h.namespace,
      LEDGER_STREAM: h.stream,
      NATS_URL,
      LOG_LEVEL: 'info',
      CONSUMER_NAME: `intake_${h.namespace}`,
      INTAKE_BINDING_FILE: bindingPath,
      INTAKE_DISCORD_TOKEN_FILE: h.tokenPath,
      INTAKE_DISCORD_API_URL: h.discord.apiUrl,
      INTAKE_FAST_IDENTIFY: 'true',
    };
  });
  afterAll(async () => {
    for (const p of procs) await p.kill('SIGKILL');
    await h?.cleanup();
  });

  const start = async (): Promise<ServiceProcess> => {
    const p = new ServiceProcess('intake', await freePort(), join(h.dir, `intake-${procs.length}.log`), env);
    procs.push(p);
    p.start();
    await p.waitReady(90_000);
    await eventually(async () => (await fetch(`${p.url}/healthz/discord`)).status === 200, {
      what: 'gateway ready',
      timeoutMs: 30_000,
    });
    return p;
  };

  it('between the source append and the 👀: no second source, the reaction is added on restart', async () => {
    const first = await start();
    // The PUT hangs (answered 503 after a minute, never stored): intake is parked right after the append.
    h.discord.inject({
      method: 'PUT',
      path: /\/reactions\//,
      status: 503,
      when: 'before',
      delayMs: 60_000,
      times: 10,
    });
    const m = h.discord.say({
      authorId: h.ids.alice,
      channelId: h.ids.bugs,
      content: 'newsletter signup button does nothing',
    });
    await eventually(async () => (await h.sourceEvents(m.id)).length === 1, {
      what: 'source appended',
      timeoutMs: 30_000,
    });
    // The source is durable and its PUT is parked in the local Discord: kill now.
    await first.kill('SIGKILL');
    h.discord.clearFaults();
    expect(h.discord.reactions(m.id)).toEqual([]);

    const second = await start();
    await eventually(async () => (await h.sourceEvents(m.id)).length === 2, {
      what: 'receipt after restart',
      timeoutMs: 30_000,
    });
    expect((await h.sourceEvents(m.id)).map((e) => e.type)).toEqual(['SourceReceived', 'ReadReceiptAdded']);
    expect(h.discord.reactions(m.id)).toEqual([expect.objectContaining({ emoji: '👀', count: 1, me: true })]);
    await second.stop();
    expect(readFileSync(join(h.dir, 'intake-0.log'), 'utf8')).not.toContain(h.discord.token);
  });

  it('between the delivery intent and the POST: reconciled on restart, exactly one post', async () => {
    const first = await start();
    const m = h.discord.say({
      authorId: h.ids.alice,
      channelId: h.ids.bugs,
      content: 'order history is empty',
    });
    await eventually(async () => (await h.sourceEvents(m.id)).length === 2, {
      what: 'recorded',
      timeoutMs: 30_000,
    });
    h.discord.inject({
      method: 'POST',
      path: `/channels/${m.id}/messages`,
      status: 503,
      when: 'before',
      delayMs: 60_000,
      times: 10,
    });
    await h.requestDelivery({
      caseId: 'C01KILL',
      deliveryId: 'D01',
      message: m,
      content: 'Recorded as a case.',
    });
    await eventually(async () => (await h.caseEvents('C01KILL')).some((e) => e.type === 'DeliveryIntended'), {
      what: 'intent journaled',
      timeoutMs: 30_000,
    });
    await first.kill('SIGKILL');
    h.discord.clearFaults();
    expect(h.botPosts(m.id)).toHaveLength(0);

    const second = await start();
    await eventually(
      async () => (await h.caseEvents('C01KILL')).some((e) => e.type === 'DeliveryConfirmed'),
      { what: 'confirmed after restart', timeoutMs: 30_000 },
    );
    expect(h.botPosts(m.id).map((x) => x.content)).toEqual(['Recorded as a case.']);
    const types = (await h.caseEvents('C01KILL')).map((e) => e.type);
    expect(types.filter((t) => t === 'DeliveryConfirmed')).toHaveLength(1);
    await second.stop();
  });
});
