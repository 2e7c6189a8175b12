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
  draft('LeaseRequested', {
    resource: 'browser:default',
    taskId: `T${i}`,
    revision: REV,
    requestId: `R${i}`,
    position: i,
  });

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
async function timed(
  label: string,
  writers: number,
  perWriter: number,
  write: (writer: number, i: number) => Promise<void>,
): Promise<number> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < perWriter; i++) await write(w, i);
    }),
  );
  const used = process.cpuUsage(cpu);
  if (process.env.BENCH_CPU)
    note(`${label}: client cpu ${((used.user + used.system) / (writers * perWriter)).toFixed(1)} µs/event`);
  return (writers * perWriter) / ((performance.now() - started) / 1000);
}

/**
 * `append_events_per_s`: EventStore.append — each event validated and encoded, with its deterministic
 * Nats-Msg-Id and the expected last subject sequence taken from the previous ack of its writer, as a
 * service appends — with `inFlight` aggregates written at once.
 * `append_raw_events_per_s`: the same number of bare `js.publish` calls of an equally sized body,
 * no headers, same connection and same concurrency: the client and server limit on this machine.
 * `append_raw_request_events_per_s`: the same as bare core requests with the ack parsed — the
 * transport the store itself uses, which is cheaper than `js.publish`; the store's ratio to it is
 * printed too, so the gain from leaving `js.publish` is not mistaken for a cheaper store.
 * Each round runs all three on fresh subjects, rotating which goes first so drifting machine load
 * falls on all alike; medians are reported, and the median of the per-round ratios beside them.
 */
export async function benchAppend(opts: AppendBenchOptions = {}): Promise<void> {
  const events = opts.events ?? 20_000;
  const inFlight = opts.inFlight ?? 1_000;
  const rounds = opts.rounds ?? 7;
  const perWriter = Math.ceil(events / inFlight);
  const namespace = `bench${Date.now().toString(36)}`;
  const stream = `B${namespace.toUpperCase()}`;
  const ledger: Ledger = await connectLedger({
    servers: opts.natsUrl ?? 'nats://127.0.0.1:4222',
    namespace,
    stream,
    name: 'bench',
  });
  try {
    await ledger.provision();
    // The raw body is the store's own encoding of a typical event of a round (same id lengths,
    // no causation), so both sides move the same body bytes; the store adds only its headers.
    const sample = Math.floor(inFlight / 2);
    const body = ledger.store
      .build({
        ...commandOf(0, sample, Math.floor(perWriter / 2)),
        events: [eventFor(Math.floor(perWriter / 2))],
      })
      .map((e) => new TextEncoder().encode(JSON.stringify(e)))[0] as Uint8Array;
    note(
      `append: ${rounds} rounds of ${inFlight * perWriter} events, ${inFlight} writers in flight, ${body.byteLength}-byte events, nats-server ${ledger.features.version}`,
    );

    const raw: number[] = [];
    const store: number[] = [];
    const rawRound = (r: number) =>
      timed(`raw ${r + 1}`, inFlight, perWriter, async (w) => {
        await ledger.js.publish(`${namespace}.case.R${r}x${w}.lease`, body);
      });
    const storeRound = (r: number) => {
      const last = new Array<number>(inFlight).fill(0);
      return timed(`store ${r + 1}`, inFlight, perWriter, async (w, i) => {
        const res = await ledger.store.append({
          ...commandOf(r, w, i),
          events: [eventFor(i)],
          expectedSeq: last[w] as number,
        });
        last[w] = res.seqs[0] as number;
      });
    };
    // The store publishes with the core request (see EventStore.publish), so the same bare request,
    // with its ack parsed, is measured too: the floor of the store's own transport.
    const decoder = new TextDecoder();
    const rawRequestRound = (r: number) =>
      timed(`raw request ${r + 1}`, inFlight, perWriter, async (w) => {
        const m = await ledger.nc.request(`${namespace}.case.Q${r}x${w}.lease`, body, { timeout: 10_000 });
        const ack = JSON.parse(decoder.decode(m.data)) as { seq?: unknown };
        if (typeof ack.seq !== 'number') throw new Error(`not an ack: ${decoder.decode(m.data)}`);
      });
    const rawRequest: number[] = [];
    const sides = [
      { name: 'raw', run: rawRound, into: raw },
      { name: 'raw request', run: rawRequestRound, into: rawRequest },
      { name: 'store', run: storeRound, into: store },
    ];
    for (let r = 0; r < rounds; r++) {
      // Each round starts with another side, so drifting load falls on all alike.
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(r + k) % sides.length] as (typeof sides)[number];
        side.into.push(await side.run(r));
      }
      note(
        `round ${r + 1}: ${sides.map((x) => `${x.name} ${Math.round(x.into[r] as number)}/s`).join(', ')}`,
      );
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const ratio = (of: number[], to: number[]) => ({
      paired_median: Math.round(median(of.map((v, i) => v / (to[i] as number))) * 100) / 100,
    });
    const ctx = {
      events: inFlight * perWriter,
      in_flight: inFlight,
      rounds,
      stat: 'median',
      event_bytes: body.byteLength,
    };
    metric('append_events_per_s', median(store), 'events/s', {
      ...ctx,
      occ: true,
      msg_id: true,
      validated: true,
    });
    metric('append_raw_events_per_s', median(raw), 'events/s', {
      ...ctx,
      occ: false,
      msg_id: false,
      via: 'js.publish',
    });
    metric('append_raw_request_events_per_s', median(rawRequest), 'events/s', {
      ...ctx,
      occ: false,
      msg_id: false,
      via: 'nc.request',
    });
    metric('append_vs_raw_ratio', median(store) / median(raw), 'ratio', {
      target: 0.6,
      ...ratio(store, raw),
    });
    metric(
      'append_vs_raw_request_ratio',
      median(store) / median(rawRequest),
      'ratio',
      ratio(store, rawRequest),
    );
  } finally {
    await ledger.jsm.streams.delete(stream).catch(() => undefined);
    await ledger.jsm.streams.delete(`${stream}_DLQ`).catch(() => undefined);
    await ledger.close();
  }
}
