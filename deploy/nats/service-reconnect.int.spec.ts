import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { draft } from '@caseloop/contracts';
import { connectLedger } from '@caseloop/ledger';
import {
  bootstrapService,
  defineConfig,
  platformConfigShape,
  platformSecrets,
  RunningService,
} from '@caseloop/platform';
import { eventually } from '@caseloop/testing';
import { Module } from '@nestjs/common';
import { z } from 'zod';
import { RestrictedNats, startRestrictedNats } from './restricted-nats.fixture';

jest.setTimeout(120_000);

@Module({})
class EmptyModule {}

const config = defineConfig({ schema: z.object({ ...platformConfigShape }), secrets: [...platformSecrets] });

/**
 * A service as deployed: its own NATS user from deploy/nats/nats.conf, its password from a 0600
 * file. Health follows the connection through a server restart and the consumer resumes.
 */
describe('a service through a NATS restart', () => {
  let nats: RestrictedNats;
  let dir: string;
  let svc: RunningService<z.infer<typeof config.schema>>;

  beforeAll(async () => {
    nats = await startRestrictedNats();
    const provisioner = await connectLedger({
      servers: nats.url,
      namespace: 'caseloop',
      stream: 'CASE_LEDGER',
      name: 'provisioner',
      user: 'provisioner',
      pass: nats.password('provisioner'),
    });
    await provisioner.provision();
    await provisioner.close();
    dir = await mkdtemp(join(tmpdir(), 'caseloop-svc-'));
    const passwordFile = join(dir, 'worker_nats_password');
    await writeFile(passwordFile, `${nats.password('worker')}\n`);
    await chmod(passwordFile, 0o600);
    svc = await bootstrapService({
      name: 'worker',
      config,
      module: () => EmptyModule,
      env: {
        NATS_URL: nats.url,
        NATS_USER: 'worker',
        NATS_PASSWORD_FILE: passwordFile,
        HTTP_PORT: '0',
        HTTP_HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
      },
    });
  });
  afterAll(async () => {
    await svc?.close();
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const health = async () => {
    const res = await fetch(`${svc.url}/healthz`);
    return {
      code: res.status,
      body: (await res.json()) as { status: string; nats: { state: string }; transport: { state: string } },
    };
  };

  it('is ready, turns not ready while NATS is down, and ready again after it returns', async () => {
    expect((await health()).code).toBe(200);
    await nats.kill();
    const down = await eventually(
      async () => {
        const h = await health();
        return h.code === 503 ? h : null;
      },
      { timeoutMs: 20_000, what: '503 while NATS is down' },
    );
    expect(['disconnected', 'reconnecting']).toContain(down.body.nats.state);
    await nats.start();
    await eventually(async () => (await health()).code === 200, { timeoutMs: 30_000, what: 'ready again' });
  });

  it('consumes again after the restart', async () => {
    const { seqs } = await svc.ledger.store.append({
      aggregate: 'case',
      aggregateId: 'Crestart',
      producer: 'worker',
      commandId: 'restart-1',
      causationId: null,
      correlationId: 'restart',
      occurredAt: '2026-11-29T20:00:00.000Z',
      events: [
        draft('AttemptStarted', {
          taskId: 'T1',
          attemptId: 'A1',
          attempt: 1,
          route: { name: 'default', kind: 'normal' },
          fromCleanTree: true,
        }),
      ],
    });
    // Nothing handles AttemptStarted here: it is acked, which moves the durable's ack floor.
    await eventually(
      async () =>
        (await svc.ledger.jsm.consumers.info('CASE_LEDGER', 'worker')).ack_floor.stream_seq >=
        (seqs[0] as number),
      { timeoutMs: 30_000, what: 'acked after the restart' },
    );
  });
});
