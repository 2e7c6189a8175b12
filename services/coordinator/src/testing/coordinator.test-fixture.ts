import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  discordSourceId,
  draft,
  EventDraft,
  Producer,
  RecordedEvent,
  visibleChars,
} from '@caseloop/contracts';
import { connectLedger, Ledger, readEvent } from '@caseloop/ledger';
import { sanitizeReport } from '@caseloop/privacy';
import { BoundedStreamReader } from '@caseloop/projections';
import { NATS_URL, uniqueSuffix } from '@caseloop/testing';

export const GUILD = '110000000000000001';
export const CHANNEL = '220000000000000002';
export const REVIEWER = '990000000000000009';

/** A unique namespace and stream on the shared NATS, a temp dir with the coordinator's files, and ledger helpers. */
export interface CoordinatorHarness {
  namespace: string;
  stream: string;
  ledger: Ledger;
  dir: string;
  env: Record<string, string>;
  report(
    n: number,
    text: string,
    opts?: { threadId?: string; authorId?: string; attachments?: string[] },
  ): Promise<RecordedEvent<'SourceReceived'>>;
  append(
    aggregate: 'case' | 'source' | 'ops',
    id: string,
    producer: Producer,
    commandId: string,
    events: EventDraft[],
  ): Promise<RecordedEvent[]>;
  caseEvents(caseId: string): Promise<RecordedEvent[]>;
  sourceEvents(sourceId: string): Promise<RecordedEvent[]>;
  all(): Promise<RecordedEvent[]>;
  /** Plays the outbox: journals and confirms every requested delivery of a case not yet confirmed. */
  confirmDeliveries(
    caseId: string,
    filter?: (d: RecordedEvent<'DeliveryRequested'>) => boolean,
  ): Promise<number>;
  cleanup(): Promise<void>;
}

export const messageIdOf = (n: number): string => `3300000000${String(n).padStart(8, '0')}`;

export async function coordinatorHarness(): Promise<CoordinatorHarness> {
  const namespace = uniqueSuffix('co');
  const stream = `T${namespace.toUpperCase()}`;
  const ledger = await connectLedger({ servers: NATS_URL, namespace, stream, name: 'test' });
  await ledger.provision();
  const dir = mkdtempSync(join(tmpdir(), 'coordinator-'));
  writeFileSync(
    join(dir, 'repositories.yaml'),
    [
      'repositories:',
      '  - id: tandem-web',
      '    url: https://git.example.com/tandem-web.git',
      '    targetBranch: main',
      '    checks:',
      '      - { name: lint, kind: lint, command: ["true"], timeoutMs: 1000 }',
      '      - { name: unit, kind: focused_test, command: ["true"], timeoutMs: 1000 }',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'routes.yaml'),
    [
      `channels:`,
      `  - { channelId: "${CHANNEL}", repository: tandem-web }`,
      `owners: { tandem-web: web-team }`,
      '',
    ].join('\n'),
  );
  const env = {
    CASELOOP_NAMESPACE: namespace,
    LEDGER_STREAM: stream,
    NATS_URL,
    HTTP_PORT: '0',
    HTTP_HOST: '127.0.0.1',
    LOG_LEVEL: process.env.CASELOOP_TEST_LOG ?? 'silent',
    CONSUMER_NAME: `coordinator_${namespace}`,
    COORDINATOR_REPOSITORIES_FILE: join(dir, 'repositories.yaml'),
    COORDINATOR_ROUTES_FILE: join(dir, 'routes.yaml'),
    COORDINATOR_CLOCK_INTERVAL_MS: '0',
  };
  const store = ledger.store;
  const append: CoordinatorHarness['append'] = async (aggregate, id, producer, commandId, events) => {
    const res = await store.append({
      aggregate,
      aggregateId: id,
      producer,
      events,
      commandId,
      causationId: null,
      correlationId: commandId,
      occurredAt: new Date().toISOString(),
    });
    const loaded = await store.load(aggregate, id);
    return loaded.events.filter((e) => res.seqs.includes(e.seq));
  };
  return {
    namespace,
    stream,
    ledger,
    dir,
    env,
    async report(n, text, opts = {}) {
      const messageId = messageIdOf(n);
      const sourceId = discordSourceId(messageId);
      const [e] = await append('source', sourceId, 'intake', `recv-${messageId}`, [
        draft('SourceReceived', {
          sourceId,
          place: { guildId: GUILD, channelId: CHANNEL, threadId: opts.threadId ?? null, messageId },
          authorId: opts.authorId ?? `44000000000000${String(n).padStart(4, '0')}`,
          authorIsReviewer: false,
          // As intake records it: the redacted copy, the raw text sealed (here: not kept).
          content: sanitizeReport(text).brief,
          rawChars: visibleChars(text),
          sealed: null,
          attachments: (opts.attachments ?? []).map((name, i) => ({
            id: `66000000000000${String(n * 10 + i).padStart(4, '0')}`,
            name,
            contentType: 'image/png',
            size: 1024,
            url: `https://cdn.example.com/attachments/${n}/${i}/${encodeURIComponent(name)}`,
          })),
          mentionedBot: false,
          createdAt: new Date(Date.UTC(2026, 10, 29, 12, 0, n)).toISOString(),
          via: 'gateway',
        }),
      ]);
      return e as RecordedEvent<'SourceReceived'>;
    },
    append,
    caseEvents: async (caseId) => (await store.load('case', caseId)).events,
    sourceEvents: async (sourceId) => (await store.load('source', sourceId)).events,
    async all() {
      const reader = await BoundedStreamReader.open(ledger.js, ledger.jsm, {
        stream,
        startSeq: 1,
        batchSize: 500,
      });
      const out: RecordedEvent[] = [];
      try {
        for (;;) {
          const batch = await reader.next();
          for (const m of batch) out.push(readEvent(m.subject, m.data, m.seq));
          if (reader.remaining === 0) break;
        }
      } finally {
        await reader.close();
      }
      return out;
    },
    async confirmDeliveries(caseId, filter = () => true) {
      const events = (await store.load('case', caseId)).events;
      const done = new Set(
        events
          .filter((e) => e.type === 'DeliveryConfirmed')
          .map((e) => (e as RecordedEvent<'DeliveryConfirmed'>).data.deliveryId),
      );
      let n = 0;
      for (const e of events) {
        if (
          e.type !== 'DeliveryRequested' ||
          done.has(e.data.deliveryId) ||
          !filter(e as RecordedEvent<'DeliveryRequested'>)
        )
          continue;
        const d = e.data;
        const threadId = d.place.threadId ?? d.place.messageId;
        await append('case', caseId, 'intake', `out-${d.deliveryId}`.slice(0, 128), [
          draft('DeliveryIntended', {
            deliveryId: d.deliveryId,
            chunkIndex: 0,
            sourceId: d.sourceId,
            chunkCount: 1,
            nonce: `n${n}`,
            channelId: d.place.channelId,
            threadId,
            contentSha256: 'f'.repeat(64),
            length: Math.min(2000, d.content.length),
            intendedAt: new Date().toISOString(),
          }),
          draft('DeliveryConfirmed', {
            deliveryId: d.deliveryId,
            chunkIndex: 0,
            sourceId: d.sourceId,
            discordMessageId: `55000000000000${String(n).padStart(4, '0')}`,
            channelId: d.place.channelId,
            threadId,
            reconciled: false,
          }),
        ]);
        n += 1;
      }
      return n;
    },
    async cleanup() {
      for (const s of [stream, `${stream}_DLQ`]) await ledger.jsm.streams.delete(s).catch(() => undefined);
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const REV = 'a'.repeat(40);
const SHA = 'c'.repeat(64);

/** The worker and evidence services' facts for a passing run on `head`, ending with the receipt. */
export async function proveAndReceipt(
  h: CoordinatorHarness,
  caseId: string,
  taskId: string,
  head: string,
  rendered = 'Receipt: PR-ready; lint and unit passed; client flow passed.',
) {
  const check = (name: string, kind: 'lint' | 'focused_test') => ({
    name,
    kind,
    outcome: 'passed' as const,
    revision: REV,
    durationMs: 5,
    exitCode: 0,
    outputSha256: null,
    outputBytes: 0,
  });
  await h.append('case', caseId, 'worker', `w-${caseId}-${head.slice(0, 4)}`, [
    draft('ChecksCompleted', {
      taskId,
      revision: REV,
      targetHead: head,
      passed: true,
      results: [check('lint', 'lint'), check('unit', 'focused_test')],
    }),
    draft('BranchPushed', {
      taskId,
      branch: `caseloop/${caseId}`,
      revision: REV,
      baseRevision: head,
      created: true,
      draftPullRequestUrl: null,
    }),
  ]);
  await h.append('case', caseId, 'evidence', `ev-${caseId}-${head.slice(0, 4)}`, [
    draft('ClientValidationCompleted', {
      taskId,
      revision: REV,
      outcome: 'passed',
      reason: null,
      captureIds: ['cap1'],
    }),
    draft('ArtifactReviewed', {
      artifactId: 'art1',
      kind: 'screenshot',
      sha256: SHA,
      decision: 'cleared',
      redactions: [],
      basis: 'fixture data',
    }),
    draft('ArtifactStored', {
      artifactId: 'art1',
      kind: 'screenshot',
      key: `cases/${caseId}/art1.png`,
      sha256: SHA,
      bytes: 9,
      contentType: 'image/png',
      revision: REV,
      captureId: 'cap1',
      leaseToken: 1,
    }),
  ]);
  await h.append('case', caseId, 'evidence', `rc-${caseId}-${head.slice(0, 4)}`, [
    draft('ReceiptBuilt', {
      receiptId: `rcpt-${head.slice(0, 4)}`,
      taskId,
      revision: REV,
      outcome: 'pr_ready',
      checks: [],
      client: { flow: 'search', outcome: 'passed', captureIds: ['cap1'] },
      evidence: [{ key: `cases/${caseId}/art1.png`, sha256: SHA, kind: 'screenshot', shareable: true }],
      residualRisk: 'none known',
      humanAction: 'approve, revise or reject',
      rendered,
      builtAt: new Date().toISOString(),
    }),
  ]);
}
