import { NATS_URL, uniqueSuffix } from '@caseloop/testing';
import { connect, headers, NatsConnection } from 'nats';
import { ReplyInbox, RequestFailed } from './reply-inbox';

const enc = new TextEncoder();
const dec = new TextDecoder();

describe('ReplyInbox (real NATS)', () => {
  let nc: NatsConnection;
  let responder: NatsConnection;

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
    responder = await connect({ servers: NATS_URL, noAsyncTraces: true });
  });
  afterAll(async () => {
    await nc.close();
    await responder.close();
  });

  const failure = (p: Promise<unknown>) =>
    p.then(
      () => 'answered',
      (e: unknown) => (e instanceof RequestFailed ? e.code : String(e)),
    );

  it('matches each answer to its request, many in flight at once, headers included', async () => {
    const subject = `inbox.${uniqueSuffix('echo')}`;
    responder.subscribe(subject, {
      // Answers out of order: the odd ones wait a little.
      callback: (_e, m) => {
        const n = Number(dec.decode(m.data));
        const answer = () => m.respond(enc.encode(`${n * 2}:${m.headers?.get('X-Tag') ?? ''}`));
        if (n % 2) setTimeout(answer, 5);
        else answer();
      },
    });
    await responder.flush();
    const inbox = new ReplyInbox(nc);
    const replies = await Promise.all(
      Array.from({ length: 500 }, (_, n) => {
        const h = headers();
        h.set('X-Tag', `t${n}`);
        return inbox
          .request(subject, enc.encode(String(n)), { headers: h, timeoutMs: 5_000 })
          .then((m) => dec.decode(m.data));
      }),
    );
    expect(replies).toEqual(Array.from({ length: 500 }, (_, n) => `${n * 2}:t${n}`));
    expect(inbox.waiting).toBe(0);
  });

  it('fails at once with 503 when nobody listens on the subject', async () => {
    const inbox = new ReplyInbox(nc);
    const started = performance.now();
    expect(
      await failure(inbox.request(`inbox.${uniqueSuffix('nobody')}`, enc.encode('x'), { timeoutMs: 5_000 })),
    ).toBe('503');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(inbox.waiting).toBe(0);
  });

  it('times out a request nobody answers, and ignores the answer that comes too late', async () => {
    const subject = `inbox.${uniqueSuffix('slow')}`;
    responder.subscribe(subject, {
      callback: (_e, m) => setTimeout(() => m.respond(enc.encode('late')), 300),
    });
    await responder.flush();
    const inbox = new ReplyInbox(nc);
    expect(await failure(inbox.request(subject, enc.encode('x'), { timeoutMs: 100 }))).toBe('TIMEOUT');
    await new Promise((r) => setTimeout(r, 400));
    expect(inbox.waiting).toBe(0);
    // The inbox still works after a late answer arrived for nobody.
    const fast = `inbox.${uniqueSuffix('fast')}`;
    responder.subscribe(fast, { callback: (_e, m) => m.respond(enc.encode('ok')) });
    await responder.flush();
    expect(dec.decode((await inbox.request(fast, enc.encode('x'), { timeoutMs: 1_000 })).data)).toBe('ok');
  });

  it('fails what is pending when its connection closes, and refuses new requests', async () => {
    const own = await connect({ servers: NATS_URL, noAsyncTraces: true });
    const subject = `inbox.${uniqueSuffix('never')}`;
    responder.subscribe(subject, { callback: () => undefined });
    await responder.flush();
    const inbox = new ReplyInbox(own);
    const pending = failure(inbox.request(subject, enc.encode('x'), { timeoutMs: 10_000 }));
    await own.flush();
    await own.close();
    expect(await pending).toBe('CONNECTION_CLOSED');
    expect(await failure(inbox.request(subject, enc.encode('x'), { timeoutMs: 1_000 }))).toBe(
      'CONNECTION_CLOSED',
    );
  });
});
