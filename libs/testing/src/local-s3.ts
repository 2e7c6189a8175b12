/**
 * An S3-compatible server on loopback (s3rver), for int tests and the sandbox. Its objects live
 * as plain files under `dir`, so a test can see (and damage) exactly what the server will return.
 * s3rver is loaded on first use so that importing the test helpers stays cheap.
 */
export interface LocalS3 {
  /** `http://127.0.0.1:<port>`: use with `forcePathStyle: true`. */
  endpoint: string;
  port: number;
  dir: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  close(): Promise<void>;
}

export async function startLocalS3(options: {
  dir: string;
  port?: number;
  address?: string;
  buckets?: string[];
}): Promise<LocalS3> {
  const { default: S3rver } = await import('s3rver');
  const address = options.address ?? '127.0.0.1';
  const server = new S3rver({
    address,
    port: options.port ?? 0,
    directory: options.dir,
    silent: true,
    // Path-style only: virtual-host buckets would need DNS for `<bucket>.127.0.0.1`.
    vhostBuckets: false,
    configureBuckets: (options.buckets ?? []).map((name) => ({ name, configs: [] })),
  });
  const info = await server.run();
  let closed = false;
  return {
    endpoint: `http://${address}:${info.port}`,
    port: info.port,
    dir: options.dir,
    // s3rver's fixed account: it verifies SigV4 signatures against these.
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    region: 'us-east-1',
    close: async () => {
      if (closed) return;
      closed = true;
      await server.close();
    },
  };
}
