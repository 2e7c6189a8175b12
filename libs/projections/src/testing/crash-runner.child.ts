import { connect } from 'nats';
import { caseViewProjection } from '../case-view/case-view.projection';
import { createProjectionDataSource } from '../data-source';
import { ProjectionRunner } from '../projection-runner';

/**
 * A projection runner that stops dead inside its N-th batch transaction, after the rows are written
 * and before the commit, and says so on stdout — for a test to SIGKILL it right there.
 */
async function main(): Promise<void> {
  const env = (k: string): string => {
    const v = process.env[k];
    if (!v) throw new Error(`${k} is required`);
    return v;
  };
  const stopAt = Number(env('CRASH_AT_BATCH'));
  const nc = await connect({ servers: env('CRASH_NATS_URL') });
  const ds = createProjectionDataSource({ url: env('CRASH_PG_URL'), schema: env('CRASH_SCHEMA') });
  await ds.initialize();
  let batches = 0;
  const runner = await ProjectionRunner.start({
    dataSource: ds,
    nc,
    stream: env('CRASH_STREAM'),
    projection: caseViewProjection,
    batchSize: Number(env('CRASH_BATCH_SIZE')),
    beforeCommit: async (lastSeq) => {
      if (++batches < stopAt) return;
      process.stdout.write(`between apply and commit at ${lastSeq}\n`);
      await new Promise(() => undefined);
    },
  });
  await runner.catchUp();
}

void main();
