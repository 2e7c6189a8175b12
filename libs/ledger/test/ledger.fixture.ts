import { draft, EventDraft } from '@caseloop/contracts';
import { NATS_URL, uniqueSuffix } from '@caseloop/testing';
import { connect } from 'nats';
import { connectLedger, Ledger } from '../src';

export const REV = 'a'.repeat(40);

export const leaseRequested = (n: number): EventDraft =>
  draft('LeaseRequested', {
    resource: 'browser:default',
    taskId: `T${n}`,
    revision: REV,
    requestId: `R${n}`,
    position: n,
  });

/** A LeaseRequested whose taskId tells a test handler how to behave. */
export const withTask = (taskId: string, n = 1): EventDraft =>
  draft('LeaseRequested', {
    resource: 'browser:default',
    taskId,
    revision: REV,
    requestId: `R${n}`,
    position: n,
  });

export const finding = (n: number): EventDraft =>
  draft('FindingRecorded', {
    findingId: `F${n}`,
    kind: 'no_progress',
    owner: 'worker',
    detail: 'stalled',
    observedSeq: n,
  });

export interface TestLedger {
  namespace: string;
  stream: string;
  ledger: Ledger;
  cleanup(): Promise<void>;
}

/** A provisioned ledger on the shared NATS in its own namespace and stream; removed by cleanup(). */
export async function testLedger(name = 'lease'): Promise<TestLedger> {
  const namespace = uniqueSuffix();
  const stream = `T${namespace.toUpperCase()}`;
  const ledger = await connectLedger({ servers: NATS_URL, namespace, stream, name });
  await ledger.provision();
  return {
    namespace,
    stream,
    ledger,
    async cleanup() {
      await ledger.close();
      // The ledger stream refuses purge but not deletion of the whole stream by an operator.
      const nc = await connect({ servers: NATS_URL });
      const jsm = await nc.jetstreamManager();
      for (const s of [stream, `${stream}_DLQ`]) await jsm.streams.delete(s).catch(() => undefined);
      await nc.close();
    },
  };
}

export const meta = (aggregateId: string, commandId: string) => ({
  aggregate: 'case' as const,
  aggregateId,
  producer: 'lease' as const,
  commandId,
  causationId: null,
  correlationId: `corr-${aggregateId}`,
  occurredAt: '2026-11-29T20:00:00.000Z',
});
