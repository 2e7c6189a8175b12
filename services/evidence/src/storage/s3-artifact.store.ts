import { createHash } from 'node:crypto';
import {
  CreateBucketCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { artifactKey } from './artifact-key';

export interface S3Settings {
  /** Null for AWS itself; an URL for MinIO or the loopback server. */
  endpoint: string | null;
  region: string;
  bucket: string;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
  /** Presigned links are for reviewers reading a receipt, so they live minutes, not days. */
  presignTtlSeconds: number;
}

export interface ArtifactToStore {
  caseId: string;
  revision: string;
  body: Uint8Array;
  contentType: string;
  /** Provenance stored with the object (case, task, capture id, lease token ...). Ids only. */
  tags: Record<string, string>;
}

export type StoreOutcome =
  | { status: 'stored'; key: string; sha256: string; bytes: number; alreadyPresent: boolean }
  | { status: 'durability_failed'; key: string; expected: string; actual: string | null; detail: string };

export type StorageErrorCode = 'unavailable' | 'access_denied' | 'not_found';

/** A broken precondition talking to the store; durability mismatches are outcomes, not errors. */
export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'StorageError';
  }
}

export const sha256Of = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/**
 * The evidence bucket. An artifact counts as durable only after it has been read back from the
 * store and its sha-256 matches what was written; anything else is reported, never trusted.
 */
export class S3ArtifactStore {
  private readonly client: S3Client;

  constructor(private readonly settings: S3Settings) {
    this.client = new S3Client({
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
      // The read-back sha-256 is the integrity check; optional CRC headers are not understood by
      // every S3-compatible store, so the SDK sends them only when an operation requires them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
  }

  get bucket(): string {
    return this.settings.bucket;
  }

  /** For the sandbox and tests; production buckets are provisioned (private) by deployment. */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
    } catch (e) {
      if (!isNotFound(e)) throw toStorageError(e, 'head bucket');
      await this.client.send(new CreateBucketCommand({ Bucket: this.settings.bucket }));
    }
  }

  async store(artifact: ArtifactToStore): Promise<StoreOutcome> {
    const sha256 = sha256Of(artifact.body);
    const key = artifactKey(artifact.caseId, artifact.revision, sha256);
    const alreadyPresent = await this.exists(key);
    if (!alreadyPresent) {
      try {
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.settings.bucket,
            Key: key,
            Body: artifact.body,
            ContentType: artifact.contentType,
            ContentLength: artifact.body.byteLength,
            Metadata: { ...artifact.tags, sha256 },
          }),
        );
      } catch (e) {
        throw toStorageError(e, 'put');
      }
    }
    const back = await this.readOrNull(key);
    if (back === null) {
      return {
        status: 'durability_failed',
        key,
        expected: sha256,
        actual: null,
        detail: 'not found on read-back',
      };
    }
    const actual = sha256Of(back);
    if (actual !== sha256 || back.byteLength !== artifact.body.byteLength) {
      return {
        status: 'durability_failed',
        key,
        expected: sha256,
        actual,
        detail: `read back ${back.byteLength} bytes with a different sha-256`,
      };
    }
    return { status: 'stored', key, sha256, bytes: back.byteLength, alreadyPresent };
  }

  async read(key: string): Promise<Buffer> {
    const body = await this.readOrNull(key);
    if (body === null) throw new StorageError('not_found', `no object at ${key}`);
    return body;
  }

  /** The object at `key`, or null when there is none. */
  readIfPresent(key: string): Promise<Buffer | null> {
    return this.readOrNull(key);
  }

  /** A short-lived GET link for a reviewer; nothing is made public. */
  async presignedLink(key: string, ttlSeconds = this.settings.presignTtlSeconds): Promise<string> {
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.settings.bucket, Key: key }), {
      expiresIn: ttlSeconds,
    });
  }

  close(): void {
    this.client.destroy();
  }

  /** Nest calls this on shutdown when the store is a provider. */
  onApplicationShutdown(): void {
    this.close();
  }

  private async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: key }));
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw toStorageError(e, 'head');
    }
  }

  private async readOrNull(key: string): Promise<Buffer | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: key }));
      if (!out.Body) return Buffer.alloc(0);
      return Buffer.from(await out.Body.transformToByteArray());
    } catch (e) {
      if (isNotFound(e)) return null;
      throw toStorageError(e, 'get');
    }
  }
}

function isNotFound(e: unknown): boolean {
  if (e instanceof S3ServiceException) {
    return (
      e.$metadata.httpStatusCode === 404 ||
      e.name === 'NotFound' ||
      e.name === 'NoSuchKey' ||
      e.name === 'NoSuchBucket'
    );
  }
  return false;
}

function toStorageError(e: unknown, op: string): StorageError {
  if (e instanceof StorageError) return e;
  if (e instanceof S3ServiceException) {
    const status = e.$metadata.httpStatusCode;
    if (status === 403) return new StorageError('access_denied', `${op}: access denied (${e.name})`);
    return new StorageError('unavailable', `${op}: ${e.name} (HTTP ${status ?? 'none'})`);
  }
  return new StorageError('unavailable', `${op}: ${(e as Error)?.message ?? String(e)}`);
}
