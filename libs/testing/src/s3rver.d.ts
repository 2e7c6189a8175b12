/** The part of s3rver 3.x (no bundled types) that startLocalS3 uses. */
declare module 's3rver' {
  import type { AddressInfo } from 'node:net';
  class S3rver {
    constructor(options: Record<string, unknown>);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
  export = S3rver;
}
