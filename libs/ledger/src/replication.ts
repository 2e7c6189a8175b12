import { headers, JetStreamClient, JetStreamManager, NatsConnection } from 'nats';
import { directGet } from './direct-get';
import { jsErrCode, JS_WRONG_LAST_SEQUENCE } from './errors';
import { ServerFeatures } from './server-features';

/**
 * How the ledger's stream is replicated, as the server reports it, and whether its concurrency
 * checks can be trusted.
 */
export interface StreamReplication {
  stream: string;
  replicas: number;
  /** The node leading the stream's raft group; null while an election runs (or the stream is missing). */
  leader: string | null;
  /** Followers that are caught up and seen recently, by name. */
  current: string[];
  /** Followers that are offline or behind, by name. */
  lagging: string[];
  /**
   * Followers the leader has not heard from for `QUIET_PEER_MS` or longer, by name. The server
   * still calls a killed follower current for some seconds; an append that waited that long for
   * its ack and finds no quorum of followers heard from meanwhile met a leader without a quorum.
   */
  quiet: string[];
  /**
   * A replicated stream on a server older than 2.9.21: two concurrent appends with the same
   * `Nats-Expected-Last-Subject-Sequence` may both be accepted (nats-server #4320). caseloop then
   * guards every expectation with a slot message id (see `expectationSlotId`).
   */
  unserialisedChecks: boolean;
  /** `healthy`, `degraded` (a follower offline or behind: quorum holds), `no_leader` (appends wait). */
  state: 'healthy' | 'degraded' | 'no_leader' | 'unknown';
  server: string;
}

/** Raft heartbeats reach a live follower every second: one silent this long is taken as gone. */
export const QUIET_PEER_MS = 3_000;

export function unserialisedChecks(features: ServerFeatures, replicas: number): boolean {
  return replicas > 1 && !features.replicatedConcurrency;
}

/**
 * The message id that turns an expectation into a claim: every append expecting `expectedSeq` on
 * `subject` carries the same id, so of concurrent appends with one expectation the stream's
 * deduplication — which the leader serialises even where its sequence check does not
 * (nats-server #4320) — keeps exactly one. A retry of the same append repeats the id and is told
 * `duplicate` with its own sequence. Unique stream-wide: the subject is part of it.
 */
export const expectationSlotId = (subject: string, expectedSeq: number): string =>
  `~${subject}@${expectedSeq}`;

export async function readReplication(
  jsm: JetStreamManager,
  stream: string,
  features: ServerFeatures,
): Promise<StreamReplication> {
  const info = await jsm.streams.info(stream);
  const replicas = info.config.num_replicas || 1;
  const peers = info.cluster?.replicas ?? [];
  const current = peers.filter((p) => p.current && !p.offline).map((p) => p.name);
  const lagging = peers.filter((p) => !p.current || p.offline).map((p) => p.name);
  // `active`: nanoseconds since the leader last heard from the follower.
  const quiet = peers
    .filter((p) => p.offline || (typeof p.active === 'number' && p.active / 1e6 >= QUIET_PEER_MS))
    .map((p) => p.name);
  const leader = replicas > 1 ? (info.cluster?.leader ?? null) : (info.cluster?.leader ?? 'standalone');
  const state =
    leader === null ? 'no_leader' : replicas > 1 && current.length < replicas - 1 ? 'degraded' : 'healthy';
  return {
    stream,
    replicas,
    leader,
    current,
    lagging,
    quiet,
    unserialisedChecks: unserialisedChecks(features, replicas),
    state,
    server: features.version,
  };
}

/** The start-up warning a service logs on a replicated stream whose server cannot serialise checks. */
export function unserialisedChecksWarning(
  r: Pick<StreamReplication, 'stream' | 'replicas' | 'server'>,
): string {
  return (
    `nats-server ${r.server} does not serialise Nats-Expected-Last-Subject-Sequence on the ` +
    `${r.replicas}-replica stream ${r.stream} (nats-server #4320, fixed in 2.9.21): appends and ` +
    `KV compare-and-set are guarded by expectation slot ids instead; upgrade to >= 2.10.23`
  );
}

/**
 * KV compare-and-set (`expectedRevision` 0: only if absent) that holds on a replicated bucket of
 * any 2.9 server: the write carries the expectation and its slot id, so of concurrent writers with
 * the same expected revision one wins (the others are told `duplicate` of a value that is not
 * theirs) even where the server's own check is not serialised (nats-server #4320). nats.js's
 * `kv.create`/`kv.update` send no message id, so they cannot be made safe there. Returns the new
 * revision, or null when the entry moved on (or another writer holds the slot).
 */
export async function kvCompareAndSet(
  js: JetStreamClient,
  jsm: JetStreamManager,
  bucket: string,
  key: string,
  value: Uint8Array,
  expectedRevision: number,
): Promise<number | null> {
  const subject = `$KV.${bucket}.${key}`;
  const h = headers();
  h.set('Nats-Expected-Last-Subject-Sequence', String(expectedRevision));
  h.set('Nats-Msg-Id', expectationSlotId(subject, expectedRevision));
  try {
    const ack = await js.publish(subject, value, { headers: h });
    if (!ack.duplicate) return ack.seq;
    // Our own retry, or someone else's write in this slot: the stored value tells.
    const stored = await directGet(jsm, `KV_${bucket}`, { seq: ack.seq });
    return stored.subject === subject && sameBytes(stored.data, value) ? ack.seq : null;
  } catch (e) {
    if (jsErrCode(e) === JS_WRONG_LAST_SEQUENCE) return null;
    throw e;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Connection state, for telling an outage (no server reachable) from a leader election. */
export type ConnectionState = 'connected' | 'disconnected' | 'reconnecting' | 'closed';

export function watchConnection(nc: NatsConnection, onChange: (s: ConnectionState) => void): void {
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') onChange('disconnected');
      else if (s.type === 'reconnecting') onChange('reconnecting');
      else if (s.type === 'reconnect') onChange('connected');
    }
    onChange('closed');
  })();
}
