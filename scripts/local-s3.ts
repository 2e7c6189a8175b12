/**
 * The sandbox's S3-compatible store on loopback (s3rver), the same one the int tests start:
 *   node -r @swc-node/register scripts/local-s3.ts --dir .sandbox/s3 --port 4568 --bucket caseloop-evidence
 * Prints one JSON line (endpoint, region, bucket, credentials of the local server) and runs until SIGTERM.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalS3 } from '../libs/testing/src/local-s3';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string', default: '.sandbox/s3' },
      port: { type: 'string', default: '4568' },
      bucket: { type: 'string', multiple: true, default: ['caseloop-evidence'] },
    },
  });
  const dir = resolve(values.dir as string);
  mkdirSync(dir, { recursive: true });
  const s3 = await startLocalS3({ dir, port: Number(values.port), buckets: values.bucket as string[] });
  process.stdout.write(
    `${JSON.stringify({ endpoint: s3.endpoint, region: s3.region, buckets: values.bucket, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, dir })}\n`,
  );
  const stop = () => void s3.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((e: unknown) => {
  process.stderr.write(`local-s3: ${(e as Error).message}\n`);
  process.exit(1);
});
