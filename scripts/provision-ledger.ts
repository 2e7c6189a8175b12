import { connectLedger } from '@caseloop/ledger';
import { ConfigError, defineConfig, parseConfig } from '@caseloop/platform';
import { z } from 'zod';

/**
 * Creates or converges the ledger and dead-letter streams, as the provisioning user, then exits.
 * Idempotent: compose runs it before the services start; operators run it after upgrades.
 */
const provisionConfig = defineConfig({
  schema: z.object({
    NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
    NATS_USER: z.string().min(1).optional(),
    NATS_PASSWORD: z.string().min(1).optional(),
    CASELOOP_NAMESPACE: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/)
      .default('caseloop'),
    LEDGER_STREAM: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .default('CASE_LEDGER'),
    LEDGER_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
    /** The lease bucket, created here with LEDGER_REPLICAS replicas (the lease service would create it with one). */
    LEASE_BUCKET: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .optional(),
    LEASE_BUCKET_HISTORY: z.coerce.number().int().min(1).max(64).default(5),
  }),
  secrets: ['NATS_PASSWORD'],
});

async function main(): Promise<void> {
  const c = parseConfig(provisionConfig);
  const ledger = await connectLedger({
    servers: c.NATS_URL,
    namespace: c.CASELOOP_NAMESPACE,
    stream: c.LEDGER_STREAM,
    name: 'provisioner',
    ...(c.NATS_USER ? { user: c.NATS_USER } : {}),
    ...(c.NATS_PASSWORD ? { pass: c.NATS_PASSWORD } : {}),
    replicas: c.LEDGER_REPLICAS,
  });
  try {
    const result = await ledger.provision();
    let leaseBucket: { name: string; replicas: number } | null = null;
    if (c.LEASE_BUCKET) {
      // An existing bucket is opened as it is: nats.js never changes a bucket's replicas.
      const kv = await ledger.js.views.kv(c.LEASE_BUCKET, {
        replicas: c.LEDGER_REPLICAS,
        history: c.LEASE_BUCKET_HISTORY,
        allow_direct: true,
      });
      const status = await kv.status();
      leaseBucket = { name: c.LEASE_BUCKET, replicas: status.replicas };
      if (status.replicas !== c.LEDGER_REPLICAS)
        result.warnings.push(
          `lease bucket ${c.LEASE_BUCKET} exists with ${status.replicas} replica(s), not ${c.LEDGER_REPLICAS}: change it with the nats CLI`,
        );
    }
    for (const w of result.warnings) process.stderr.write(`provision: warning: ${w}\n`);
    process.stdout.write(`${JSON.stringify({ server: ledger.features.version, ...result, leaseBucket })}\n`);
  } finally {
    await ledger.close();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`provision: ${e instanceof ConfigError ? e.message : (e as Error).message}\n`);
  process.exit(1);
});
