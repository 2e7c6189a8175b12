/**
 * `npm run bench:intake`: intake against the local Discord and the real NATS on this machine, in one
 * process (discord.js client, local Discord server and intake share the event loop and two cores).
 *
 * 1. Ack latency over 1,000 messages, one every 25 ms (40/s, under Discord's global REST limit of
 *    50 requests/s per bot, which intake keeps): from the moment the local Discord dispatches
 *    MESSAGE_CREATE to the moment it receives intake's 👀 PUT — which intake sends only after the
 *    SourceReceived append was acknowledged by JetStream. p50 / p99.
 * 2. A burst of 1,000 messages in 10 s (one every 10 ms, two reporters): how many were sent, recorded
 *    exactly once (SourceReceived in the ledger) and got exactly one reaction. At 100 messages/s the
 *    reactions queue behind the 50/s limit; burst_drain_ms says how long after the last message the
 *    last reaction landed. INTAKE_BENCH_GLOBAL_RPS raises the limit (the local Discord has none).
 *
 * JSON lines on stdout: intake_ack_p50_ms, intake_ack_p99_ms, burst_sent, burst_recorded, burst_reactions
 * (plus intake_ack_max_ms, burst_duplicates, burst_drain_ms). Progress on stderr.
 */
import { IntakeHarness } from '../services/intake/test/intake.fixture';
import { metric, note, percentile } from './ledger/metrics';

const ACK_MESSAGES = Number(process.env.INTAKE_BENCH_ACK_MESSAGES ?? 1_000);
const BURST_MESSAGES = Number(process.env.INTAKE_BENCH_BURST_MESSAGES ?? 1_000);
const BURST_WINDOW_MS = 10_000;
const ACK_INTERVAL_MS = Number(process.env.INTAKE_BENCH_ACK_INTERVAL_MS ?? 25);
const GLOBAL_RPS = Number(process.env.INTAKE_BENCH_GLOBAL_RPS ?? 50);

const sleepUntil = async (due: number): Promise<void> => {
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
};

async function main(): Promise<void> {
  const h = await IntakeHarness.create({ limits: { reportsPerDayPerUser: 10_000, inboundMaxChars: 4_000 } });
  try {
    const intake = await h.start({ deltaOnStart: false, restGlobalRps: GLOBAL_RPS }, 'warn');
    const reacted = new Map<string, number>();
    const waiting = new Map<string, () => void>();
    h.discord.onEvent((e) => {
      if (e.t !== 'MESSAGE_REACTION_ADD') return;
      const d = e.d as { message_id: string; user_id: string };
      if (d.user_id !== h.discord.botId) return;
      reacted.set(d.message_id, (reacted.get(d.message_id) ?? 0) + 1);
      waiting.get(d.message_id)?.();
    });

    note(
      `ack latency over ${ACK_MESSAGES} messages, one every ${ACK_INTERVAL_MS} ms, REST limit ${GLOBAL_RPS}/s`,
    );
    const warmup = 50;
    const latencies: number[] = [];
    const paceStart = performance.now();
    for (let i = 0; i < ACK_MESSAGES + warmup; i++) {
      await sleepUntil(paceStart + i * ACK_INTERVAL_MS);
      let id = '';
      const done = new Promise<void>((resolve) => {
        const t0 = performance.now();
        const m = h.discord.say({
          authorId: h.ids.alice,
          channelId: h.ids.bugs,
          content: `latency probe ${i}: the cart total is off by one`,
        });
        id = m.id;
        if (reacted.has(id)) resolve();
        waiting.set(id, () => {
          if (i >= warmup) latencies.push(performance.now() - t0);
          resolve();
        });
      });
      await done;
      waiting.delete(id);
    }
    latencies.sort((a, b) => a - b);
    const ctx = {
      n: latencies.length,
      interval_ms: ACK_INTERVAL_MS,
      rest_global_rps: GLOBAL_RPS,
      target_p99_ms: 100,
    };
    metric('intake_ack_p50_ms', percentile(latencies, 50), 'ms', ctx);
    metric('intake_ack_p99_ms', percentile(latencies, 99), 'ms', ctx);
    metric('intake_ack_max_ms', latencies[latencies.length - 1] ?? NaN, 'ms');

    note(`burst: ${BURST_MESSAGES} messages in ${BURST_WINDOW_MS / 1000} s`);
    const burst: string[] = [];
    const interval = BURST_WINDOW_MS / BURST_MESSAGES;
    const start = performance.now();
    for (let i = 0; i < BURST_MESSAGES; i++) {
      await sleepUntil(start + i * interval);
      const author = i % 2 === 0 ? h.ids.alice : h.ids.bob;
      burst.push(
        h.discord.say({
          authorId: author,
          channelId: h.ids.bugs,
          content: `burst ${i}: search is slow on page ${i % 7}`,
        }).id,
      );
    }
    const sentAt = performance.now();
    note(`sent in ${Math.round(sentAt - start)} ms; waiting for the last reactions`);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !burst.every((id) => reacted.has(id)))
      await new Promise((r) => setTimeout(r, 50));
    const drainMs = performance.now() - sentAt;
    await intake.runtime.recorder.idle();

    const ids = new Set(burst);
    const received = (await h.events()).filter(
      (e) => e.type === 'SourceReceived' && ids.has(e.data.place.messageId),
    );
    const perMessage = new Map<string, number>();
    for (const e of received)
      if (e.type === 'SourceReceived')
        perMessage.set(e.data.place.messageId, (perMessage.get(e.data.place.messageId) ?? 0) + 1);
    metric('burst_sent', burst.length, 'messages', {
      window_ms: BURST_WINDOW_MS,
      sent_in_ms: Math.round(sentAt - start),
    });
    metric('burst_recorded', perMessage.size, 'messages', {
      exactly_once: [...perMessage.values()].every((n) => n === 1),
    });
    metric('burst_reactions', burst.filter((id) => reacted.get(id) === 1).length, 'messages', {
      with_one_reaction: true,
    });
    metric('burst_duplicates', received.length - perMessage.size, 'events');
    metric('burst_drain_ms', drainMs, 'ms', { after_last_send: true, rest_global_rps: GLOBAL_RPS });
    await intake.stop();
  } finally {
    await h.cleanup();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
