import { draft } from '@caseloop/contracts';
import { Binding } from '../binding/binding.schema';
import { DiscordRest } from '../discord/discord.rest';
import { toInbound, discordMessagePayload } from '../intake/inbound-message';
import { IntakeIndex } from '../intake/intake-index';
import { IntakeLedgerWriter } from '../intake/ledger-writer';
import { SourceRecorder } from '../intake/source.recorder';
import { IntakeLog } from '../ops/intake.metrics';
import { minSnowflake, pageStep, snowflakeAt, snowflakeBefore } from './delta.paging';

export interface DeltaOptions {
  pageSize: number;
  /** With no message seen yet in a channel, how far back the first fetch reaches. */
  backfillMs: number;
}

export interface DeltaReport {
  requestId: string;
  channels: {
    channelId: string;
    afterId: string | null;
    fetched: number;
    recorded: number;
    lastSeenId: string | null;
  }[];
}

/**
 * Fetches what the gateway missed — per bound channel and each of their active threads, only the
 * messages after the last one intake saw — and feeds them through the same recorder as live messages.
 */
export class DeltaFetcher {
  /** Per channel: the oldest message a live attempt failed on, so the next delta reaches back to it. */
  readonly #retryFrom = new Map<string, string>();
  #running: Promise<DeltaReport> | null = null;

  constructor(
    private readonly rest: DiscordRest,
    private readonly binding: Binding,
    private readonly index: IntakeIndex,
    private readonly recorder: SourceRecorder,
    private readonly writer: IntakeLedgerWriter,
    private readonly opts: DeltaOptions,
    private readonly log: IntakeLog,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A live message that could not be recorded: the next delta starts at or before it. */
  retryLater(channelId: string, messageId: string): void {
    const prev = this.#retryFrom.get(channelId);
    this.#retryFrom.set(channelId, prev ? minSnowflake(prev, messageId) : messageId);
  }

  /** One fetch at a time: a tick that arrives during a fetch waits for it and then runs its own. */
  async fetch(requestId: string, causationId: string | null): Promise<DeltaReport> {
    while (this.#running) await this.#running.catch(() => undefined);
    const run = this.#fetch(requestId, causationId);
    this.#running = run;
    try {
      return await run;
    } finally {
      this.#running = null;
    }
  }

  /**
   * Bound channels and their active threads. Archived threads are skipped: posting in one unarchives
   * it, so a missed message there shows up in the active list next time.
   */
  async #targets(): Promise<string[]> {
    const bound = this.binding.channels.map((c) => c.id);
    const targets = new Set(bound);
    try {
      for (const t of await this.rest.activeThreads(this.binding.guildId)) {
        if (t.parent_id && bound.includes(t.parent_id)) targets.add(t.id);
      }
    } catch (e) {
      this.log.warn(
        { err: (e as Error).message },
        'active threads not listed; this delta covers the bound channels only',
      );
    }
    return [...targets];
  }

  async #fetch(requestId: string, causationId: string | null): Promise<DeltaReport> {
    const report: DeltaReport = { requestId, channels: [] };
    for (const channelId of await this.#targets()) {
      const seen = this.index.lastSeen.get(channelId) ?? null;
      const retry = this.#retryFrom.get(channelId);
      this.#retryFrom.delete(channelId);
      let after = seen ?? snowflakeAt(this.now().getTime() - this.opts.backfillMs);
      if (retry) after = minSnowflake(after, snowflakeBefore(retry));
      const afterId = after;
      let fetched = 0;
      let recorded = 0;
      try {
        for (let next: string | null = after; next;) {
          const page = await this.rest.messagesAfter(channelId, next, this.opts.pageSize);
          const step = pageStep(page, this.opts.pageSize);
          for (const raw of step.oldestFirst) {
            fetched++;
            const parsed = discordMessagePayload.safeParse(raw);
            if (!parsed.success) {
              this.log.warn(
                { channelId, messageId: raw.id },
                'delta message does not match the expected shape; skipped',
              );
              continue;
            }
            const outcome = await this.recorder.ingest(toInbound(parsed.data), 'delta');
            if (outcome === 'recorded' || outcome === 'dropped' || outcome === 'command') recorded++;
          }
          next = step.nextAfter;
        }
      } catch (e) {
        this.log.warn(
          { channelId, err: (e as Error).message },
          'delta fetch of a channel failed; retried next time',
        );
        this.retryLater(channelId, (BigInt(afterId) + 1n).toString());
        continue;
      }
      const lastSeenId = this.index.lastSeen.get(channelId) ?? null;
      const r = await this.writer.append({
        aggregate: 'ops',
        aggregateId: requestId,
        commandId: `delta-${requestId}-${channelId}`,
        causationId,
        correlationId: requestId,
        occurredAt: this.now().toISOString(),
        event: draft('DeltaFetched', { requestId, channelId, afterId, lastSeenId, fetched, recorded }),
      });
      if (r.status === 'appended') this.index.apply(r.event);
      report.channels.push({ channelId, afterId, fetched, recorded, lastSeenId });
    }
    return report;
  }
}
