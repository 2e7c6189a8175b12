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
import { DependencyUnavailable } from '@caseloop/ledger';

/** Where the worker leaves a check's whole redacted log for the evidence service (no disk is shared). */
export interface CheckLogStore {
  /** Stores `body` at `key` and confirms it is there with that size and digest; throws when it is not. */
  put(key: string, body: Buffer, sha256: string): Promise<void>;
}

export interface CheckLogS3Settings {
  /** Null for AWS itself; an URL for MinIO or the loopback server. */
  endpoint: string | null;
  region: string;
  bucket: string;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
}

export class CheckLogStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CheckLogStoreError';
  }
}

/**
 * The check-log bucket. Keys are content-addressed (`checks/<case>/<revision>/<sha256>.log`), so an
 * object already there is the same log and is not written again; a written one is read back and its
 * digest compared, because the evidence service will refuse a log whose digest differs.
 */
export class S3CheckLogStore implements CheckLogStore {
  private readonly client: S3Client;

  constructor(private readonly settings: CheckLogS3Settings) {
    this.client = new S3Client({
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
  }

  /** For the sandbox and tests; production buckets are provisioned by deployment. */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
    } catch (e) {
      if (!isNotFound(e)) throw new CheckLogStoreError(`check-log bucket: ${describe(e)}`, { cause: e });
      await this.client.send(new CreateBucketCommand({ Bucket: this.settings.bucket }));
    }
  }

  async put(key: string, body: Buffer, sha256: string): Promise<void> {
    try {
      if (!(await this.exists(key))) {
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.settings.bucket,
            Key: key,
            Body: body,
            ContentType: 'text/plain; charset=utf-8',
            ContentLength: body.byteLength,
            Metadata: { sha256 },
          }),
        );
      }
      const back = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: key }));
      const bytes = back.Body ? Buffer.from(await back.Body.transformToByteArray()) : Buffer.alloc(0);
      const actual = createHash('sha256').update(bytes).digest('hex');
      if (actual !== sha256)
        throw new CheckLogStoreError(`${key} read back with sha-256 ${actual}, not ${sha256}`);
    } catch (e) {
      if (e instanceof CheckLogStoreError) throw e;
      // The store did not take it (unreachable, 5xx): an outage the transport waits out.
      throw new DependencyUnavailable('object store', `storing ${key}: ${describe(e)}`, { cause: e });
    }
  }

  /** The stored log (tests and `caseloop` tooling; the evidence service reads it with its own client). */
  async read(key: string): Promise<Buffer> {
    const out = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: key }));
    return out.Body ? Buffer.from(await out.Body.transformToByteArray()) : Buffer.alloc(0);
  }

  close(): void {
    this.client.destroy();
  }

  onApplicationShutdown(): void {
    this.close();
  }

  private async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: key }));
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }
}

function isNotFound(e: unknown): boolean {
  return (
    e instanceof S3ServiceException &&
    (e.$metadata.httpStatusCode === 404 || e.name === 'NotFound' || e.name === 'NoSuchKey')
  );
}

function describe(e: unknown): string {
  if (e instanceof S3ServiceException) return `${e.name} (HTTP ${e.$metadata.httpStatusCode ?? 'none'})`;
  return (e as Error)?.message ?? String(e);
}
