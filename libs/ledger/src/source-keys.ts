import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SealedText } from '@caseloop/contracts';
import {
  DiscardPolicy,
  JetStreamClient,
  JetStreamManager,
  KV,
  RetentionPolicy,
  StorageType,
  StreamConfig,
} from 'nats';
import { LedgerError } from './errors';

/**
 * The source keys: one AES-256-GCM key per source, in a KV bucket beside the ledger. The ledger
 * keeps a report's raw text only sealed with its key (SourceReceived `sealed`); deleting the key
 * forgets the text while the stream stays append-only. The bucket keeps one revision per key, and a
 * forgotten key is erased (its stored bytes overwritten, STREAM.MSG.DELETE without `no_erase`) and
 * left as a delete marker, so it is never created again for the same source.
 */
export const sourceKeyBucket = (namespace: string): string => `${namespace}-source-keys`;
export const sourceKeyStream = (namespace: string): string => `KV_${sourceKeyBucket(namespace)}`;
/** The bucket entry (and the `keyId` of sealed text) of a source's key. */
export const sourceKeyId = (sourceId: string): string => `src.${sourceId}`;

const KEY_BYTES = 32;
const IV_BYTES = 12;

/**
 * The bucket's stream, created by the provisioner like the ledger's. Unlike a default KV bucket it
 * allows deleting a message, which is how a key is erased rather than only hidden by a marker.
 */
export function sourceKeyStreamConfig(
  namespace: string,
  replicas = 1,
): Partial<StreamConfig> & { name: string } {
  const bucket = sourceKeyBucket(namespace);
  return {
    name: sourceKeyStream(namespace),
    description: `caseloop source keys for namespace ${namespace}: deleting one forgets a report's raw text`,
    subjects: [`$KV.${bucket}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.New,
    max_msgs_per_subject: 1,
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msg_size: 1024,
    num_replicas: replicas,
    deny_delete: false,
    deny_purge: false,
    allow_rollup_hdrs: true,
    allow_direct: true,
  };
}

export type KeyState = 'present' | 'forgotten' | 'absent';

/** Seals and opens report text with per-source keys; forgets a source by erasing its key. */
export class SourceKeys {
  private constructor(
    private readonly kv: KV,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
  ) {}

  /** Binds to the provisioned bucket (stream info, direct get and publish on it; never creates it). */
  static async open(js: JetStreamClient, jsm: JetStreamManager, namespace: string): Promise<SourceKeys> {
    const bucket = sourceKeyBucket(namespace);
    try {
      await jsm.streams.info(sourceKeyStream(namespace));
    } catch (e) {
      throw new LedgerError(
        'stream_missing',
        `the source key bucket ${bucket} is missing or not readable (${(e as Error).message}): run \`caseloop provision\``,
      );
    }
    const kv = await js.views.kv(bucket, { bindOnly: true, allow_direct: true });
    return new SourceKeys(kv, jsm, sourceKeyStream(namespace));
  }

  /** What the bucket holds for a source: its key, a delete marker (forgotten), or nothing. */
  async state(sourceId: string): Promise<KeyState> {
    const e = await this.kv.get(sourceKeyId(sourceId));
    if (!e) return 'absent';
    return e.operation === 'PUT' && e.value.length === KEY_BYTES ? 'present' : 'forgotten';
  }

  /**
   * Seals `text` with the source's key, creating the key on first use (the same message seen twice
   * is sealed with the same key). `forgotten` when the source's key was deleted: it is not made again.
   */
  async seal(sourceId: string, text: string): Promise<SealedText | 'forgotten'> {
    const keyId = sourceKeyId(sourceId);
    let key: Buffer | 'forgotten' | null = randomBytes(KEY_BYTES);
    try {
      // Only into an empty entry (one round trip for a new source): an existing key, or the delete
      // marker of a forgotten source, refuses the write, and what is there is read instead.
      await this.kv.put(keyId, key, { previousSeq: 0 });
    } catch (e) {
      key = await this.keyOf(keyId);
      if (key === null) throw e;
      if (key === 'forgotten') return 'forgotten';
    }
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(sourceId, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return {
      keyId,
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      ciphertext: ciphertext.toString('base64'),
    };
  }

  /** The raw text, or null when its key is gone (forgotten). Throws when the text does not authenticate. */
  async open(sourceId: string, sealed: SealedText): Promise<string | null> {
    const key = await this.keyOf(sealed.keyId);
    if (key === null || key === 'forgotten') return null;
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(sourceId, 'utf8'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([
      decipher.update(Buffer.from(sealed.ciphertext, 'base64')),
      decipher.final(),
    ]).toString('utf8');
  }

  /**
   * Erases the source's key and leaves a delete marker. Idempotent: `erased` when a key was there,
   * `already_forgotten` when only the marker was, `absent` when the source never had a key.
   */
  async forget(sourceId: string): Promise<'erased' | 'already_forgotten' | 'absent'> {
    const keyId = sourceKeyId(sourceId);
    const e = await this.kv.get(keyId);
    if (e && e.operation !== 'PUT') return 'already_forgotten';
    if (e) {
      // Overwrites the stored key (erase), unlike a marker alone, which only hides it.
      await this.jsm.streams.deleteMessage(this.stream, e.revision, true);
    }
    await this.kv.delete(keyId);
    return e ? 'erased' : 'absent';
  }

  private async keyOf(keyId: string): Promise<Buffer | 'forgotten' | null> {
    const e = await this.kv.get(keyId);
    if (!e) return null;
    if (e.operation !== 'PUT' || e.value.length !== KEY_BYTES) return 'forgotten';
    return Buffer.from(e.value);
  }
}
