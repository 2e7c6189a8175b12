import { draft, EventDraft } from '@caseloop/contracts';
import { CommandMeta, connectLedger, Ledger } from '@caseloop/ledger';
import { metric, note } from './metrics';

export interface AppendBenchOptions {
  natsUrl?: string;
  /** Events per measured round. */
  events?: number;
  /** Aggregates written concurrently: each is one writer chaining its expectations, so this is the number in flight. */
  inFlight?: number;
  rounds?: number;
}

const REV = 'd'.repeat(40);
const eventFor = (i: number): EventDraft =>
  draft('LeaseRequested', { resource: 'browser:default', taskId: `T${i}`, revision: REV, requestId: `R${i}`, position: i });

/** The command writer `w` sends as its `i`-th in round `r`. */
const commandOf = (r: number, w: number, i: number): CommandMeta => ({
  aggregate: 'case',
  aggregateId: `S${r}x${w}`,
  producer: 'lease',
  commandId: `r${r}-w${w}-c${i}`,
  causationId: null,
  correlationId: `r${r}-w${w}`,
  occurredAt: '2026-11-29T20:00:00.000Z',
});

/** Runs `perWriter` for each of `writers` chains concurrently; returns events per second. */
async function timed(writers: number, perWriter: number, write: (writer: number, i: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < perWriter; i++) await write(w, i);
    }),
  );
  const used = process.cpuUsage(cpu);
  if (process.env.BENCH_CPU) note(`client cpu ${((used.user + used.system) / (writers * perWriter)).toFixed(1)} µs/event`);
  return (writers * perWriter) / ((performance.now() - started) / 1000);
}

/**
 * `append_events_per_s`: EventStore.append — each event validated and encoded, with its deterministic
 * Nats-Msg-Id and the expected last subject sequence taken from the previous ack of its writer, as a
 * service appends — with `inFlight` aggregates written at once.
 * `append_raw_events_per_s`: the same number of bare `js.publish` calls of an equally sized body,
 * no headers, same connection and same concurrency: the client and server limit on this machine.
 * Rounds pair raw and store on fresh subjects, alternating which goes first so drifting machine load
 * falls on both alike; medians are reported, and the median of the per-round ratios beside them.
 */
export async function benchAppend(opts: AppendBenchOptions = {}): Promise<void> {
  const events = opts.events ?? 20_000;
  const inFlight = opts.inFlight ?? 1_000;
  const rounds = opts.rounds ?? 7;
  const perWriter = Math.ceil(events / inFlight);
  const namespace = `bench${Date.now().toString(36)}`;
  const stream = `B${namespace.toUpperCase()}`;
  const ledger: Ledger = await connectLedger({ servers: opts.natsUrl ?? 'nats://127.0.0.1:4222', namespace, stream, name: 'bench' });
  try {
    await ledger.provision();
    // The raw body is the store's own encoding of a typical event of a round (same id lengths,
    // no causation), so both sides move the same body bytes; the store adds only its headers.
    const sample = Math.floor(inFlight / 2);
    const body = ledger.store
      .build({ ...commandOf(0, sample, Math.floor(perWriter / 2)), events: [eventFor(Math.floor(perWriter / 2))] })
      .map((e) => new TextEncoder().encode(JSON.stringify(e)))[0] as Uint8Array;
    note(`append: ${rounds} rounds of ${inFlight * perWriter} events, ${inFlight} writers in flight, ${body.byteLength}-byte events, nats-server ${ledger.features.version}`);

    const raw: number[] = [];
    const store: number[] = [];
    const rawRound = (r: number) =>
      timed(inFlight, perWriter, async (w) => {
        await ledger.js.publish(`${namespace}.case.R${r}x${w}.lease`, body);
      });
    const storeRound = (r: number) => {
      const last = new Array<number>(inFlight).fill(0);
      return timed(inFlight, perWriter, async (w, i) => {
        const res = await ledger.store.append({ ...commandOf(r, w, i), events: [eventFor(i)], expectedSeq: last[w] as number });
        last[w] = res.seqs[0] as number;
      });
    };
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        raw.push(await rawRound(r));
        store.push(await storeRound(r));
      } else {
        store.push(await storeRound(r));
        raw.push(await rawRound(r));
      }
      note(`round ${r + 1}: raw ${Math.round(raw[r] as number)}/s, store ${Math.round(store[r] as number)}/s`);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const ctx = { events: inFlight * perWriter, in_flight: inFlight, rounds, stat: 'median', event_bytes: body.byteLength };
    metric('append_events_per_s', median(store), 'events/s', { ...ctx, occ: true, msg_id: true, validated: true });
    metric('append_raw_events_per_s', median(raw), 'events/s', { ...ctx, occ: false, msg_id: false });
    const paired = store.map((v, i) => v / (raw[i] as number));
    metric('append_vs_raw_ratio', median(store) / median(raw), 'ratio', { target: 0.6, paired_median: Math.round(median(paired) * 100) / 100 });
  } finally {
    await ledger.jsm.streams.delete(stream).catch(() => undefined);
    await ledger.jsm.streams.delete(`${stream}_DLQ`).catch(() => undefined);
    await ledger.close();
  }
}
