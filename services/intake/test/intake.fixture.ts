import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { draft, RecordedEvent } from '@caseloop/contracts';
import {
  defaultSeed,
  LocalDiscord,
  LocalDiscordOptions,
  type SandboxMessage,
} from '@caseloop/discord-sandbox';
import { connectLedger, Ledger, readEvent } from '@caseloop/ledger';
import { createLogger } from '@caseloop/platform';
import { NATS_URL, uniqueSuffix } from '@caseloop/testing';
import { connect } from 'nats';
import { Registry } from 'prom-client';
import { Binding, parseBinding } from '../src/binding/binding.schema';
import { readTokenFile } from '../src/binding/token-file';
import { IntakeRuntime, IntakeRuntimeOptions } from '../src/intake/intake.runtime';
import { IntakeMetrics } from '../src/ops/intake.metrics';

export interface Ids {
  bugs: string;
  feedback: string;
  general: string;
  /** A channel in another server the bot is also in. */
  elsewhere: string;
  alice: string;
  bob: string;
  rita: string;
  sam: string;
  otherBot: string;
  reportersRole: string;
}

/** The default cast plus an unbound channel and a second bot account. */
export const intakeSeed = (): LocalDiscordOptions => {
  const seed = defaultSeed();
  return {
    ...seed,
    channels: [...seed.channels, { name: 'general', topic: 'not bound to intake' }],
    users: [...seed.users, { username: 'otherbot', bot: true }],
    otherGuilds: [{ name: 'another-server', channels: [{ name: 'elsewhere' }] }],
  };
};

export interface StartedIntake {
  runtime: IntakeRuntime;
  ledger: Ledger;
  metrics: IntakeMetrics;
  registry: Registry;
  stop(): Promise<void>;
}

/**
 * One isolated world per test file: a local Discord, a provisioned ledger in its own namespace and
 * stream, a 0600 token file, captured log lines. `start()` may be called again to model a restart.
 */
export class IntakeHarness {
  readonly logLines: string[] = [];
  readonly namespace = uniqueSuffix('in');
  readonly stream = `T${this.namespace.toUpperCase()}`;
  readonly dir = mkdtempSync(join(tmpdir(), 'caseloop-intake-'));
  readonly tokenPath = join(this.dir, 'discord-token');
  ids!: Ids;
  binding!: Binding;
  private readonly ledgers: Ledger[] = [];
  private readonly running = new Set<StartedIntake>();

  private constructor(readonly discord: LocalDiscord) {}

  static async create(
    options: { seed?: LocalDiscordOptions; limits?: Partial<Binding['limits']> } = {},
  ): Promise<IntakeHarness> {
    const discord = await LocalDiscord.start(options.seed ?? intakeSeed());
    const h = new IntakeHarness(discord);
    writeFileSync(h.tokenPath, discord.token);
    chmodSync(h.tokenPath, 0o600);
    h.ids = {
      bugs: discord.channelId('bugs'),
      feedback: discord.channelId('feedback'),
      general: discord.channelId('general'),
      elsewhere: discord.channelId('elsewhere'),
      alice: discord.userId('alice'),
      bob: discord.userId('bob'),
      rita: discord.userId('rita'),
      sam: discord.userId('sam'),
      otherBot: discord.userId('otherbot'),
      reportersRole: discord.roleId('reporters'),
    };
    h.binding = parseBinding({
      guildId: discord.guildId,
      channels: [
        { id: h.ids.bugs, mode: 'open' },
        { id: h.ids.feedback, mode: 'mention' },
      ],
      reporters: [h.ids.alice],
      reporterRoles: [h.ids.reportersRole],
      reviewers: [h.ids.rita],
      limits: { inboundMaxChars: 200, reportsPerDayPerUser: 50, replyChunkSize: 2000, ...options.limits },
    });
    const admin = await connectLedger({
      servers: NATS_URL,
      namespace: h.namespace,
      stream: h.stream,
      name: 'intake',
    });
    await admin.provision();
    h.ledgers.push(admin);
    return h;
  }

  /** Starts an intake process-equivalent: its own NATS connection, Discord client and index. */
  async start(overrides: Partial<IntakeRuntimeOptions> = {}, logLevel = 'debug'): Promise<StartedIntake> {
    const ledger = await connectLedger({
      servers: NATS_URL,
      namespace: this.namespace,
      stream: this.stream,
      name: 'intake',
    });
    this.ledgers.push(ledger);
    const registry = new Registry();
    const metrics = new IntakeMetrics(registry);
    const sink = new Writable({
      write: (chunk: Buffer, _enc, cb) => {
        this.logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        cb();
      },
    });
    const log = createLogger({ name: 'intake', level: logLevel, destination: sink });
    const runtime = await IntakeRuntime.start({
      ledger,
      binding: this.binding,
      token: await readTokenFile(this.tokenPath),
      apiUrl: this.discord.apiUrl,
      dedupeWindowMs: 90_000,
      deltaBackfillMs: 24 * 3_600_000,
      deltaPageSize: 100,
      readyTimeoutMs: 20_000,
      reconcileFetchLimit: 50,
      fastIdentify: true,
      deltaOnStart: true,
      log,
      metrics,
      ...overrides,
    });
    const started: StartedIntake = {
      runtime,
      ledger,
      metrics,
      registry,
      stop: async () => {
        this.running.delete(started);
        await runtime.stop();
        await ledger.close();
      },
    };
    this.running.add(started);
    return started;
  }

  /** Every event in the namespace, in stream order. */
  async events(): Promise<RecordedEvent[]> {
    const ledger = this.ledgers[0] as Ledger;
    const consumer = await ledger.js.consumers.get(this.stream);
    const out: RecordedEvent[] = [];
    const info = await ledger.jsm.streams.info(this.stream);
    if (info.state.messages === 0) return out;
    for (;;) {
      const msgs = await consumer.fetch({ max_messages: 1000, expires: 1000 });
      let got = 0;
      let done = false;
      for await (const m of msgs) {
        got++;
        out.push(readEvent(m.subject, m.data, m.seq));
        if (m.info.pending === 0) {
          done = true;
          msgs.stop();
          break;
        }
      }
      if (done || got === 0) return out;
    }
  }

  /** What the coordinator would append: a DeliveryRequested on the case, returned as recorded. */
  async requestDelivery(input: {
    caseId: string;
    deliveryId: string;
    message: { id: string; channelId: string };
    threadId?: string | null;
    content: string;
    kind?: 'ack' | 'receipt' | 'link_review' | 'notice';
    receiptId?: string | null;
  }): Promise<RecordedEvent<'DeliveryRequested'>> {
    const ledger = this.ledgers[0] as Ledger;
    const threadId = input.threadId ?? null;
    await ledger.store.append({
      aggregate: 'case',
      aggregateId: input.caseId,
      producer: 'coordinator',
      commandId: `req-${input.caseId}-${input.deliveryId}`,
      causationId: null,
      correlationId: `discord-${input.message.id}`,
      occurredAt: new Date().toISOString(),
      events: [
        draft('DeliveryRequested', {
          deliveryId: input.deliveryId,
          sourceId: `discord-${input.message.id}`,
          kind: input.kind ?? 'ack',
          place: {
            guildId: this.discord.guildId,
            channelId: threadId ? this.ids.bugs : input.message.channelId,
            threadId,
            messageId: input.message.id,
          },
          content: input.content,
          receiptId: input.receiptId ?? null,
        }),
      ],
    });
    return (await this.caseEvents(input.caseId)).find(
      (e): e is RecordedEvent<'DeliveryRequested'> =>
        e.type === 'DeliveryRequested' && e.data.deliveryId === input.deliveryId,
    ) as RecordedEvent<'DeliveryRequested'>;
  }

  /** Appends events on a case as another service would (coordinator, worker, evidence), returned as recorded. */
  async appendCase(
    caseId: string,
    producer: 'coordinator' | 'worker' | 'evidence',
    events: ReturnType<typeof draft>[],
  ): Promise<RecordedEvent[]> {
    const before = (await this.caseEvents(caseId)).length;
    await (this.ledgers[0] as Ledger).store.append({
      aggregate: 'case',
      aggregateId: caseId,
      producer,
      commandId: `t-${caseId}-${before}`,
      causationId: null,
      correlationId: caseId,
      occurredAt: new Date().toISOString(),
      events,
    });
    return (await this.caseEvents(caseId)).slice(before);
  }

  async caseEvents(caseId: string): Promise<RecordedEvent[]> {
    return (await (this.ledgers[0] as Ledger).store.load('case', caseId)).events;
  }

  /** The coordinator's side of a link review, so a reviewer can settle it. */
  async requestLinkReview(
    caseId: string,
    reviewId: string,
    message: { id: string; channelId: string },
  ): Promise<void> {
    await (this.ledgers[0] as Ledger).store.append({
      aggregate: 'case',
      aggregateId: caseId,
      producer: 'coordinator',
      commandId: `lr-${reviewId}`,
      causationId: null,
      correlationId: `discord-${message.id}`,
      occurredAt: new Date().toISOString(),
      events: [
        draft('LinkReviewRequested', {
          sourceId: `discord-${message.id}`,
          place: {
            guildId: this.discord.guildId,
            channelId: message.channelId,
            threadId: null,
            messageId: message.id,
          },
          reporterId: this.ids.alice,
          reviewId,
          confidence: 0.6,
          reasons: ['similar title'],
        }),
      ],
    });
  }

  /**
   * What the bot posted in a channel or thread, oldest first: not the THREAD_STARTER_MESSAGE (21)
   * Discord itself puts first in a thread the bot opened from a message.
   */
  botPosts(channelId: string): SandboxMessage[] {
    return this.discord
      .messages(channelId)
      .filter((x) => x.author.id === this.discord.botId && x.type !== 21);
  }

  async sourceEvents(messageId: string): Promise<RecordedEvent[]> {
    return (await (this.ledgers[0] as Ledger).store.load('source', `discord-${messageId}`)).events;
  }

  async cleanup(): Promise<void> {
    for (const s of [...this.running]) await s.stop().catch(() => undefined);
    for (const l of this.ledgers) await l.close().catch(() => undefined);
    await this.discord.close();
    const nc = await connect({ servers: NATS_URL });
    const jsm = await nc.jetstreamManager();
    for (const s of [this.stream, `${this.stream}_DLQ`]) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
