import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CaseView, foldCase } from '@caseloop/case-model';
import { RecordedEvent } from '@caseloop/contracts';
import type { LocalDiscord, SandboxMessage } from '@caseloop/discord-sandbox';
import { connectLedger, Ledger } from '@caseloop/ledger';
import { dropStackState, Stack, StackOptions, startStack } from '@caseloop/stack';
import { eventually, NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';

const ROOT = join(__dirname, '..', '..');

/** Reports the example repository's bug in two people's words, and a piece of product feedback. */
export const REPORTS = {
  cartTotal:
    'The cart total ignores quantities: I added two apples and one cheese and the total shows €9.40 instead of €12.90. Expected the total to count every unit. Web shop in Chrome 120, version 1.4.2. Customers are undercharged on every multi-item order; screenshot attached.',
  cartTotalOtherWords:
    'Wrong cart total when buying more than one of an item: two apples plus a cheese come to €9.40 on the checkout page, it should be €12.90. Chrome 120, shop 1.4.2. Every order with quantities is undercharged; screenshot attached.',
  feedback: 'Feature request: it would be great to have a wishlist so I can save products for later.',
};

export const ofType = <K extends RecordedEvent['type']>(
  events: readonly RecordedEvent[],
  type: K,
): RecordedEvent<K>[] => events.filter((e): e is RecordedEvent<K> => e.type === type);

/**
 * One whole system per test file (its own namespace, stream, lease bucket, Postgres schema and
 * directory), driven from outside: reports go in through the local Discord, assertions read what
 * a reporter sees there and what the ledger says.
 */
export class LoopWorld {
  private constructor(
    readonly stack: Stack,
    readonly ledger: Ledger,
    readonly discord: LocalDiscord,
  ) {}

  static async start(options: Partial<StackOptions> = {}): Promise<LoopWorld> {
    const chromium = options.chromium === undefined ? '/usr/bin/chromium' : options.chromium;
    if (chromium !== null && !existsSync(chromium)) {
      throw new Error(
        `the end-to-end tests drive Chromium at ${chromium}: run scripts/ensure-deps.sh as root, or apt-get install -y chromium`,
      );
    }
    const namespace = uniqueSuffix('e2e');
    const dir = await mkdtemp(join(tmpdir(), 'caseloop-e2e-'));
    const started = Date.now();
    const stack = await startStack({
      dir,
      natsUrl: NATS_URL,
      databaseUrl: PG_URL,
      namespace,
      stream: `T${namespace.toUpperCase()}`,
      dbSchema: namespace,
      leaseBucket: `${namespace}-leases`,
      readyTimeoutMs: 180_000,
      ...options,
      chromium,
    });
    process.stdout.write(
      `stack ${namespace} up in ${Date.now() - started} ms (logs: ${join(dir, 'logs')})\n`,
    );
    const ledger = await connectLedger({
      servers: options.natsUrl ?? NATS_URL,
      namespace,
      stream: stack.stream,
      name: 'e2e',
    });
    if (!stack.discord) throw new Error('the e2e tests drive a local Discord');
    return new LoopWorld(stack, ledger, stack.discord);
  }

  async stop(keepDir = false): Promise<void> {
    await this.ledger.close().catch(() => undefined);
    await this.stack.stop();
    await dropStackState(this.stack);
    if (!keepDir) await rm(this.stack.dir, { recursive: true, force: true });
  }

  get ids() {
    const d = this.discord;
    return {
      bugs: d.channelId('bugs'),
      feedback: d.channelId('feedback'),
      alice: d.userId('alice'),
      bob: d.userId('bob'),
      rita: d.userId('rita'),
      bot: d.botId,
    };
  }

  report(
    author: 'alice' | 'bob' | 'rita',
    content: string,
    channel: 'bugs' | 'feedback' = 'bugs',
  ): SandboxMessage {
    return this.discord.say({
      authorId: this.discord.userId(author),
      channelId: this.discord.channelId(channel),
      content,
      ...(channel === 'feedback' ? { mentionsBot: true } : {}),
    });
  }

  /** A message inside the thread started on `reportId` (Discord gives the thread the message's id). */
  reply(reportId: string, author: 'alice' | 'bob' | 'rita', content: string): SandboxMessage {
    return this.discord.say({ authorId: this.discord.userId(author), threadId: reportId, content });
  }

  /**
   * What the bot posted in the report's thread, oldest first: not the THREAD_STARTER_MESSAGE (21)
   * Discord itself puts first in a thread started from a message.
   */
  botPosts(reportId: string): SandboxMessage[] {
    if (!this.discord.threads().some((t) => t.id === reportId)) return [];
    return this.discord.messages(reportId).filter((m) => m.author.bot && m.type !== 21);
  }

  receipts(reportId: string): SandboxMessage[] {
    return this.botPosts(reportId).filter((m) => m.content.includes('caseloop receipt'));
  }

  reactions(messageId: string): string[] {
    return (this.discord.reactions(messageId) ?? []).filter((r) => r.me).map((r) => r.emoji);
  }

  async sourceEvents(messageId: string): Promise<RecordedEvent[]> {
    return (await this.ledger.store.load('source', `discord-${messageId}`)).events;
  }

  async events(caseId: string): Promise<RecordedEvent[]> {
    return (await this.ledger.store.load('case', caseId)).events;
  }

  async view(caseId: string): Promise<CaseView> {
    return foldCase(await this.events(caseId)) as CaseView;
  }

  /** The case a report was routed to (opened or linked). */
  async caseOf(messageId: string, timeoutMs = 120_000): Promise<{ caseId: string; outcome: string }> {
    return until(`the report ${messageId} routed to a case`, timeoutMs, async () => {
      const routed = ofType(await this.sourceEvents(messageId), 'SourceRouted').at(-1);
      return routed ? { caseId: routed.data.caseId, outcome: routed.data.outcome } : null;
    });
  }

  /** `caseloop audit <caseId>` against this stack once the projection has caught up: exit code and output. */
  async audit(caseId: string): Promise<{ code: number; out: string }> {
    return until(`caseloop audit ${caseId} without lag`, 60_000, async () => {
      const r = await runCli(['audit', caseId], this.stack.cliEnv);
      return /not applied yet/.test(r.out) ? null : r;
    });
  }

  /** Every case the stream knows about, by id. */
  async caseIds(): Promise<string[]> {
    const info = await this.ledger.jsm.streams.info(this.stack.stream, {
      subjects_filter: `${this.stack.namespace}.case.*.coordinator`,
    } as never);
    const subjects = Object.keys((info.state as { subjects?: Record<string, number> }).subjects ?? {});
    return [...new Set(subjects.map((s) => s.split('.')[2] as string))];
  }

  logTail(chars = 3_000): string {
    return Object.values(this.stack.services)
      .map((s) => `--- ${s.name}\n${s.logTail(chars)}`)
      .join('\n');
  }
}

export function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin', 'caseloop.js'), ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
        timeout: 120_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

export function until<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | null | undefined | false> | T | null | undefined | false,
): Promise<T> {
  return eventually(probe, { timeoutMs, intervalMs: 250, what }) as Promise<T>;
}

/** A small deterministic generator (mulberry32): a failing random choice can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
