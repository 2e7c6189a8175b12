import {
  decodeLeaseQueue,
  decodeLeaseRecord,
  decodeLeaseRequest,
  encodeRecord,
  LeaseQueue,
  leaseKey,
  LeaseRecord,
  LeaseRequestRecord,
  LeaseSlot,
  requestKey,
  parseLeaseKey,
  queueKey,
  QueueSlot,
} from '@caseloop/lease-model';
import { kvCompareAndSet } from '@caseloop/ledger';
import { JetStreamClient, JetStreamManager, KV, KvEntry, QueuedIterator } from 'nats';

/**
 * The lease bucket on NATS KV (nats-server 2.9): create-if-absent and update-if-revision are the
 * only writes. Releases and expiries are writes of a `released` / `expired` record by compare-and-set,
 * never deletes: the next grant is then a compare-and-set on that entry too, whose new revision is
 * necessarily larger (tokens only grow), and a late `check` by the old holder still reads why it lost.
 * The bucket has no TTL: on 2.9 it is per bucket and silent, so liveness is judged from the recorded expiry.
 */
export class LeaseStore {
  private watcher: QueuedIterator<KvEntry> | null = null;

  private constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly kv: KV,
    readonly bucket: string,
    /** Creation time of the bucket's stream: it tells one incarnation of the bucket (and its revisions) from the next. */
    readonly epoch: number,
  ) {}

  /** Creates the bucket if it does not exist (allow_direct, so checks are direct gets). */
  static async open(js: JetStreamClient, bucket: string, history = 5): Promise<LeaseStore> {
    const kv = await js.views.kv(bucket, { history, allow_direct: true });
    const status = await kv.status();
    const created = Date.parse(status.streamInfo.created);
    return new LeaseStore(
      js,
      await js.jetstreamManager(false),
      kv,
      bucket,
      Number.isFinite(created) ? created : 0,
    );
  }

  async readSlot(resource: string): Promise<LeaseSlot | null> {
    const e = await this.kv.get(leaseKey(resource));
    return e && e.operation === 'PUT' ? { revision: e.revision, record: decodeLeaseRecord(e.value) } : null;
  }

  async readQueue(resource: string): Promise<QueueSlot | null> {
    const e = await this.kv.get(queueKey(resource));
    return e && e.operation === 'PUT' ? { revision: e.revision, queue: decodeLeaseQueue(e.value) } : null;
  }

  async readRequest(requestId: string): Promise<{ revision: number; record: LeaseRequestRecord } | null> {
    const e = await this.kv.get(requestKey(requestId));
    return e && e.operation === 'PUT' ? { revision: e.revision, record: decodeLeaseRequest(e.value) } : null;
  }

  /** What became of a request, for its client to read; by compare-and-set like every other write. */
  writeRequest(record: LeaseRequestRecord, expectedRevision: number): Promise<number | null> {
    return this.cas(requestKey(record.requestId), encodeRecord(record), expectedRevision);
  }

  /** Writes by compare-and-set (`expectedRevision` 0: only if absent). Null when the entry moved on. */
  writeSlot(resource: string, record: LeaseRecord, expectedRevision: number): Promise<number | null> {
    return this.cas(leaseKey(resource), encodeRecord(record), expectedRevision);
  }

  writeQueue(resource: string, queue: LeaseQueue, expectedRevision: number): Promise<number | null> {
    return this.cas(queueKey(resource), encodeRecord(queue), expectedRevision);
  }

  /**
   * Calls `onChange(resource, kind)` for every key's current state, then for every change, from any
   * writer (several lease service replicas share the bucket).
   */
  async watch(onChange: (resource: string, kind: 'lease' | 'queue') => void): Promise<void> {
    const it = await this.kv.watch({ key: '>', headers_only: true });
    this.watcher = it;
    void (async () => {
      for await (const e of it) {
        const k = parseLeaseKey(e.key);
        if (k) onChange(k.resource, k.kind);
      }
    })();
  }

  close(): void {
    this.watcher?.stop();
    this.watcher = null;
  }

  /** Not kv.create/update: on a replicated bucket of nats-server < 2.9.21 only a slot id makes CAS exclusive (#4320). */
  private cas(key: string, value: Uint8Array, expectedRevision: number): Promise<number | null> {
    return kvCompareAndSet(this.js, this.jsm, this.bucket, key, value, expectedRevision);
  }
}
