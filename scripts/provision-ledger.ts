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
    process.stdout.write(`${JSON.stringify({ server: ledger.features.version, ...result })}\n`);
  } finally {
    await ledger.close();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`provision: ${e instanceof ConfigError ? e.message : (e as Error).message}\n`);
  process.exit(1);
});
