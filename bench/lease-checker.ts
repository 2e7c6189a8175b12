/**
 * The re-check as a browser phase runs it: its own process and connection, asking "is token T still
 * the holder of R?" in a loop while other tasks contend for R. Started by lease.bench.ts; prints one
 * JSON line of latencies (ms) when its stdin closes.
 */
import { LeaseClient } from '@caseloop/lease-client';
import { NATS_URL } from '@caseloop/testing';
import { connect } from 'nats';

async function main(): Promise<void> {
  const { LEASE_NAMESPACE: namespace, LEASE_BUCKET: bucket, LEASE_RESOURCE: resource } = process.env;
  if (!namespace || !bucket || !resource)
    throw new Error('LEASE_NAMESPACE, LEASE_BUCKET and LEASE_RESOURCE are required');
  const nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
  const client = await LeaseClient.connect(nc, { namespace, bucket });
  let running = true;
  process.stdin.on('close', () => (running = false));
  process.stdin.on('end', () => (running = false));
  process.stdin.resume();
  const samples: number[] = [];
  let token = 1;
  console.log(JSON.stringify({ ready: true }));
  while (running) {
    const t0 = performance.now();
    const c = await client.check(resource, token);
    samples.push(performance.now() - t0);
    if (!c.holder && c.currentToken !== null) token = c.currentToken;
    // one check per tick: a browser phase checks before each click, not in a busy loop
    await new Promise((r) => setImmediate(r));
  }
  await nc.close();
  console.log(JSON.stringify({ samples }));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
