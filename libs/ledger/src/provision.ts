import { MAX_EVENT_BYTES, streamSubjects } from '@caseloop/contracts';
import {
  DiscardPolicy,
  JetStreamManager,
  nanos,
  RetentionPolicy,
  StorageType,
  StreamConfig,
  StreamInfo,
} from 'nats';
import { LedgerError, jsErrCode } from './errors';
import { unserialisedChecks, unserialisedChecksWarning } from './replication';
import { ServerFeatures } from './server-features';
import { sourceKeyStreamConfig } from './source-keys';

export interface LedgerTopology {
  namespace: string;
  /** The ledger stream, e.g. `CASE_LEDGER`. */
  stream: string;
}

/** The dead-letter stream sits beside the ledger: `<STREAM>_DLQ`. */
export const deadLetterStreamName = (stream: string): string => `${stream}_DLQ`;
/** Dead-letter records are published by the consumer that gave up: `<ns>_dlq.<producer>.<consumer>`. */
export const deadLetterRoot = (namespace: string): string => `${namespace}_dlq`;
export const deadLetterSubject = (namespace: string, producer: string, consumer: string): string =>
  `${deadLetterRoot(namespace)}.${producer}.${consumer}`;
export const maxDeliveriesAdvisory = (stream: string): string =>
  `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${stream}.*`;
export const terminatedAdvisory = (stream: string): string =>
  `$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.${stream}.*`;

/** Room for the envelope headers; a body above MAX_EVENT_BYTES still lands so readers can dead-letter it. */
export const LEDGER_MAX_MSG_SIZE = MAX_EVENT_BYTES * 2;
export const DUPLICATE_WINDOW_MS = 2 * 60_000;

/**
 * The ledger stream: append-only (no delete, no purge), nothing ever ages out, and a full
 * stream refuses new events rather than silently dropping old ones.
 */
export function ledgerStreamConfig(
  t: LedgerTopology,
  replicas = 1,
): Partial<StreamConfig> & { name: string } {
  return {
    name: t.stream,
    description: `caseloop case ledger for namespace ${t.namespace}`,
    subjects: streamSubjects(t.namespace),
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.New,
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msgs_per_subject: -1,
    max_msg_size: LEDGER_MAX_MSG_SIZE,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    num_replicas: replicas,
    deny_delete: true,
    deny_purge: true,
    allow_direct: true,
    allow_rollup_hdrs: false,
  };
}

/** Dead letters: advisories the server emits for this stream's consumers, plus our own records. */
export function deadLetterStreamConfig(
  t: LedgerTopology,
  replicas = 1,
): Partial<StreamConfig> & { name: string } {
  return {
    name: deadLetterStreamName(t.stream),
    description: `dead letters of ${t.stream}`,
    subjects: [
      `${deadLetterRoot(t.namespace)}.>`,
      maxDeliveriesAdvisory(t.stream),
      terminatedAdvisory(t.stream),
    ],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msg_size: LEDGER_MAX_MSG_SIZE,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    num_replicas: replicas,
    deny_delete: true,
    deny_purge: false,
    allow_direct: true,
  };
}

export interface ProvisionResult {
  ledger: { name: string; created: boolean; updated: boolean };
  deadLetters: { name: string; created: boolean; updated: boolean };
  /** The source key bucket's stream (`KV_<namespace>-source-keys`): the keys of sealed report text. */
  sourceKeys: { name: string; created: boolean; updated: boolean };
  /** What the operator must know about this stream on this server (nats-server #4320 on < 2.9.21). */
  warnings: string[];
}

/** Idempotent: creates what is missing, converges what drifted, refuses what cannot change. */
export async function provisionStreams(
  jsm: JetStreamManager,
  t: LedgerTopology,
  features: ServerFeatures,
  replicas = 1,
): Promise<ProvisionResult> {
  // On < 2.9.21 a replicated stream does not serialise expectation checks (nats-server #4320).
  // The store guards every expectation with a slot message id there (see expectationSlotId), so
  // the stream is provisioned — and the gap is said, here and by every service at start.
  const warnings = unserialisedChecks(features, replicas)
    ? [unserialisedChecksWarning({ stream: t.stream, replicas, server: features.version })]
    : [];
  return {
    ledger: await ensureStream(jsm, ledgerStreamConfig(t, replicas)),
    deadLetters: await ensureStream(jsm, deadLetterStreamConfig(t, replicas)),
    sourceKeys: await ensureStream(jsm, sourceKeyStreamConfig(t.namespace, replicas)),
    warnings,
  };
}

const JS_STREAM_NOT_FOUND = 10059;

async function ensureStream(
  jsm: JetStreamManager,
  want: Partial<StreamConfig> & { name: string },
): Promise<{ name: string; created: boolean; updated: boolean }> {
  let info: StreamInfo | null = null;
  try {
    info = await jsm.streams.info(want.name);
  } catch (e) {
    if (jsErrCode(e) !== JS_STREAM_NOT_FOUND) throw e;
  }
  if (!info) {
    try {
      await jsm.streams.add(want);
      return { name: want.name, created: true, updated: false };
    } catch (e) {
      // Another provisioner won the race; converge below like any existing stream.
      info = await jsm.streams.info(want.name);
    }
  }
  const have = info.config;
  if (have.storage !== want.storage) {
    throw new LedgerError(
      'provision_conflict',
      `${want.name} exists with ${have.storage} storage; the ledger needs ${want.storage}`,
    );
  }
  if (have.deny_delete !== want.deny_delete || have.deny_purge !== want.deny_purge) {
    throw new LedgerError(
      'provision_conflict',
      `${want.name} exists with deny_delete=${have.deny_delete} deny_purge=${have.deny_purge}; these cannot be changed in place`,
    );
  }
  const drifted = (Object.keys(want) as (keyof StreamConfig)[]).filter(
    (k) => JSON.stringify(have[k]) !== JSON.stringify(want[k]) && !(k === 'description' && have.description),
  );
  if (drifted.length === 0) return { name: want.name, created: false, updated: false };
  try {
    await jsm.streams.update(want.name, { ...have, ...want } as StreamConfig);
  } catch (e) {
    throw new LedgerError(
      'provision_conflict',
      `${want.name}: cannot converge ${drifted.join(', ')}: ${(e as Error).message}`,
    );
  }
  return { name: want.name, created: false, updated: true };
}
