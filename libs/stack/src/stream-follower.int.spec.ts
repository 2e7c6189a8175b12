import { BoundedStreamReader } from '@caseloop/projections';
import { eventually, NATS_URL, uniqueSuffix } from '@caseloop/testing';
import { connect, JetStreamManager, NatsConnection, StorageType } from 'nats';
import { followStream } from './stream-follower';

/**
 * The sandbox's ledger narration reads through an ephemeral consumer, which the server removes when
 * the reader stalls past its inactivity threshold (a loaded machine). Here the consumer is deleted
 * under the reader, the way the server does it: the follower must read on from where it was, every
 * message once, and never throw.
 */
jest.setTimeout(120_000);

/**
 * A fetch in flight when its consumer is deleted ends only when its idle heartbeats go missing
 * (nats.js sets them to half the fetch's 10 s expiry and gives up after two), so noticing a deletion
 * with messages pending can take 10–20 s: the waits below allow for that, not for a slow follower.
 */
const NOTICE_MS = 45_000;

let nc: NatsConnection;
let jsm: JetStreamManager;
const stream = `FOLLOW_${uniqueSuffix('f').toUpperCase()}`;
const subject = `${stream.toLowerCase()}.events`;
const enc = new TextEncoder();

beforeAll(async () => {
  nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
  jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name: stream, subjects: [`${subject}`], storage: StorageType.Memory });
});
afterAll(async () => {
  await jsm?.streams.delete(stream).catch(() => undefined);
  await nc?.close();
});

const publish = async (from: number, to: number) => {
  const js = nc.jetstream();
  for (let i = from; i <= to; i++) await js.publish(subject, enc.encode(String(i)));
};
const deleteConsumers = async (): Promise<number> => {
  let n = 0;
  for (const c of await (await jsm.consumers.list(stream)).next()) {
    await jsm.consumers.delete(stream, c.name);
    n++;
  }
  return n;
};

it('the bare reader fails once its consumer is gone (what crashed the sandbox)', async () => {
  await publish(1, 1);
  const reader = await BoundedStreamReader.open(nc.jetstream(), jsm, { stream, startSeq: 1, batchSize: 10 });
  expect((await reader.next(1_000)).map((m) => m.seq)).toEqual([1]);
  expect(await deleteConsumers()).toBe(1);
  await publish(2, 2);
  // it throws, or at best never delivers message 2 again
  const seen: number[] = [];
  let threw = false;
  for (let i = 0; i < 3 && !threw; i++)
    await reader.next(1_000).then(
      (b) => seen.push(...b.map((m) => m.seq)),
      () => (threw = true),
    );
  expect(threw || !seen.includes(2)).toBe(true);
  await reader.close();
});

it('reads on from the last sequence it saw when its consumer is deleted under it, idle or with messages pending', async () => {
  const first = (await jsm.streams.info(stream)).state.last_seq + 1;
  await publish(first, first + 2);
  const seen: number[] = [];
  const reopened: { why: string; position: number }[] = [];
  let stopped = false;
  const following = followStream(nc.jetstream(), jsm, {
    stream,
    startSeq: first,
    batchSize: 2,
    retryMs: 100,
    onMessage: (m) => seen.push(m.seq),
    onReopen: (why, position) => reopened.push({ why, position }),
    stopped: () => stopped,
  });
  let settled = false;
  void following.finally(() => (settled = true));
  const upTo = (last: number) => Array.from({ length: last - first + 1 }, (_, i) => first + i);

  await eventually(() => seen.length === 3 || undefined, { what: 'the first three' });
  // idle: nothing pending when the consumer goes, then more is published
  expect(await deleteConsumers()).toBe(1);
  await publish(first + 3, first + 5);
  await eventually(() => seen.length === 6 || undefined, {
    what: 'the three after the deletion',
    timeoutMs: NOTICE_MS,
  });
  expect(seen).toEqual(upTo(first + 5));
  expect(reopened[0]?.position).toBe(first + 3);

  // behind: messages published first, the consumer deleted before it delivered them all
  await publish(first + 6, first + 15);
  await deleteConsumers();
  await eventually(() => seen.length === 16 || undefined, { what: 'all sixteen', timeoutMs: NOTICE_MS });
  expect(seen).toEqual(upTo(first + 15));
  // the second deletion is noticed at the follower's next fetch, which may come after the last
  // message if it had read them all before the consumer went
  await eventually(() => reopened.length >= 2 || undefined, {
    what: 'a second new consumer',
    timeoutMs: NOTICE_MS,
  });
  expect(settled).toBe(false);

  stopped = true;
  await following;
});
