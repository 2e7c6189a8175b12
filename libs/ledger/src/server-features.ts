import { LedgerError } from './errors';

/**
 * What the connected nats-server can be trusted with. Gates are decided from `nc.info.version`,
 * never by sending a header and hoping: 2.9 silently ignores headers it does not know.
 */
export interface ServerFeatures {
  version: string;
  /** `Nats-Expected-Last-Subject-Sequence-Subject`: concurrency over a wildcard (a whole case). */
  aggregateConcurrency: boolean;
  /** `sync_interval: always` on the stream (fsync on every write). */
  syncAlways: boolean;
  /** Several filter subjects on one consumer. */
  multiFilterConsumers: boolean;
  /** Concurrency checks that hold in a cluster (nats-server #4320): R3 streams are safe. */
  replicatedConcurrency: boolean;
  /**
   * `+TERM <reason>`. 2.9.10 does not parse it (checked here): the message is neither terminated nor
   * acked, stays pending and is redelivered after ack_wait, and no MSG_TERMINATED advisory is sent.
   * A plain `term()` works there; the reason then lives only in our dead-letter record.
   */
  termWithReason: boolean;
  /** Per-message TTL and KV delete markers. */
  perMessageTtl: boolean;
}

export function parseVersion(v: string): [number, number, number] {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(v);
  if (!m)
    throw new LedgerError('feature_unsupported', `cannot read nats-server version ${JSON.stringify(v)}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

export function atLeast(v: string, min: string): boolean {
  const a = parseVersion(v);
  const b = parseVersion(min);
  for (let i = 0; i < 3; i++) {
    if ((a[i] as number) !== (b[i] as number)) return (a[i] as number) > (b[i] as number);
  }
  return true;
}

export function serverFeatures(version: string): ServerFeatures {
  return {
    version,
    aggregateConcurrency: atLeast(version, '2.11.0'),
    syncAlways: atLeast(version, '2.10.0'),
    multiFilterConsumers: atLeast(version, '2.10.0'),
    replicatedConcurrency: atLeast(version, '2.9.21'),
    termWithReason: atLeast(version, '2.10.0'),
    perMessageTtl: atLeast(version, '2.11.0'),
  };
}
