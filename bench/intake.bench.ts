/**
 * `npm run bench:intake`: intake against the local Discord and the real NATS on this machine, in one
 * process (discord.js client, local Discord server and intake share the event loop and two cores).
 *
 * 1. Ack latency, 1,000 messages one after another: from the moment the local Discord dispatches
 *    MESSAGE_CREATE to the moment it receives intake's 👀 PUT — which intake sends only after the
 *    SourceReceived append was acknowledged by JetStream. p50 / p99.
 * 2. A burst of 1,000 messages in 10 s (one every 10 ms, two reporters): how many were sent, recorded
 *    exactly once (SourceReceived in the ledger) and got exactly one reaction.
 *
 * JSON lines on stdout: intake_ack_p50_ms, intake_ack_p99_ms, burst_sent, burst_recorded, burst_reactions
 * (plus intake_ack_max_ms, burst_duplicates, burst_drain_ms). Progress on stderr.
 */
import { IntakeHarness } from '../services/intake/test/intake.fixture';
import { metric, note, percentile } from './ledger/metrics';

const ACK_MESSAGES = Number(process.env.INTAKE_BENCH_ACK_MESSAGES ?? 1_000);
const BURST_MESSAGES = Number(process.env.INTAKE_BENCH_BURST_MESSAGES ?? 1_000);
const BURST_WINDOW_MS = 10_000;

async function main(): Promise<void> {
  const h = await IntakeHarness.create({ limits: { reportsPerDayPerUser: 10_000, inboundMaxChars: 4_000 } });
  try {
    const intake = await h.start({ deltaOnStart: false }, 'warn');
    const reacted = new Map<string, number>();
    const waiting = new Map<string, () => void>();
    h.discord.onEvent((e) => {
      if (e.t !== 'MESSAGE_REACTION_ADD') return;
      const d = e.d as { message_id: string; user_id: string };
      if (d.user_id !== h.discord.botId) return;
      reacted.set(d.message_id, (reacted.get(d.message_id) ?? 0) + 1);
      waiting.get(d.message_id)?.();
    });

    note(`ack latency over ${ACK_MESSAGES} messages`);
    const warmup = 50;
    const latencies: number[] = [];
    for (let i = 0; i < ACK_MESSAGES + warmup; i++) {
      let id = '';
      const done = new Promise<void>((resolve) => {
        const t0 = performance.now();
        const m = h.discord.say({ authorId: h.ids.alice, channelId: h.ids.bugs, content: `latency probe ${i}: the cart total is off by one` });
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
    metric('intake_ack_p50_ms', percentile(latencies, 50), 'ms', { n: latencies.length, target_p99_ms: 100 });
    metric('intake_ack_p99_ms', percentile(latencies, 99), 'ms', { n: latencies.length, target_p99_ms: 100 });
    metric('intake_ack_max_ms', latencies[latencies.length - 1] ?? NaN, 'ms');

    note(`burst: ${BURST_MESSAGES} messages in ${BURST_WINDOW_MS / 1000} s`);
    const burst: string[] = [];
    const interval = BURST_WINDOW_MS / BURST_MESSAGES;
    const start = performance.now();
    for (let i = 0; i < BURST_MESSAGES; i++) {
      const due = start + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const author = i % 2 === 0 ? h.ids.alice : h.ids.bob;
      burst.push(h.discord.say({ authorId: author, channelId: h.ids.bugs, content: `burst ${i}: search is slow on page ${i % 7}` }).id);
    }
    const sentAt = performance.now();
    note(`sent in ${Math.round(sentAt - start)} ms; waiting for the last reactions`);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !burst.every((id) => reacted.has(id))) await new Promise((r) => setTimeout(r, 50));
    const drainMs = performance.now() - sentAt;
    await intake.runtime.recorder.idle();

    const ids = new Set(burst);
    const received = (await h.events()).filter((e) => e.type === 'SourceReceived' && ids.has(e.data.place.messageId));
    const perMessage = new Map<string, number>();
    for (const e of received) if (e.type === 'SourceReceived') perMessage.set(e.data.place.messageId, (perMessage.get(e.data.place.messageId) ?? 0) + 1);
    metric('burst_sent', burst.length, 'messages', { window_ms: BURST_WINDOW_MS, sent_in_ms: Math.round(sentAt - start) });
    metric('burst_recorded', perMessage.size, 'messages', { exactly_once: [...perMessage.values()].every((n) => n === 1) });
    metric('burst_reactions', burst.filter((id) => reacted.get(id) === 1).length, 'messages', { with_one_reaction: true });
    metric('burst_duplicates', received.length - perMessage.size, 'events');
    metric('burst_drain_ms', drainMs, 'ms', { after_last_send: true });
    await intake.stop();
  } finally {
    await h.cleanup();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
});
