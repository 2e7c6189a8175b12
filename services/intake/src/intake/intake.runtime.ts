import { discordSourceId, RecordedEvent } from '@caseloop/contracts';
import { Ledger, SourceKeys } from '@caseloop/ledger';
import { Subscription } from 'nats';
import { ulid } from 'ulid';
import { Binding } from '../binding/binding.schema';
import { verifyBindingAgainstDiscord } from '../binding/binding.verifier';
import { BotToken } from '../binding/token-file';
import { CommandRegistrar, CommandRegistrarOptions } from '../commands/command.registrar';
import { ReviewerCommandHandler } from '../commands/reviewer-command.handler';
import {
  APPLICATION_COMMANDS,
  parseSlash,
  SlashInteraction,
  slashInteractionSchema,
} from '../commands/slash-command';
import {
  ComponentInteraction,
  componentInteractionSchema,
  ModalInteraction,
  modalInteractionSchema,
} from '../commands/decision-components';
import { DeltaFetcher, DeltaReport } from '../delta/delta.fetcher';
import { ChannelDirectory } from '../discord/channel.directory';
import { DiscordGateway, GatewayState } from '../discord/discord.gateway';
import { IntakeLog, IntakeMetrics } from '../ops/intake.metrics';
import { DeliveryOutbox } from '../outbox/delivery.outbox';
import { PROGRESS_EVENTS, STATUS_EVENTS, StatusUpdater } from '../status/status.updater';
import { discordMessagePayload, InboundMessage, toInbound } from './inbound-message';
import { IntakeIndex } from './intake-index';
import { loadIntakeIndex } from './intake-index.loader';
import { IntakeLedgerWriter } from './ledger-writer';
import { SourceRecorder } from './source.recorder';
import { deletedMessageIds, listenForForgetRequests, SourceForgetter } from './source.forgetter';

type AnyInteraction =
  | { kind: 'slash'; i: SlashInteraction }
  | { kind: 'component'; i: ComponentInteraction }
  | { kind: 'modal'; i: ModalInteraction };

export interface IntakeRuntimeOptions {
  ledger: Ledger;
  binding: Binding;
  token: BotToken;
  /** `http://host:port/api` of a local Discord; null for discord.com. */
  apiUrl: string | null;
  dedupeWindowMs: number;
  deltaBackfillMs: number;
  deltaPageSize: number;
  readyTimeoutMs: number;
  reconcileFetchLimit: number;
  /** Re-identify without Discord's 5 s throttle (local Discord only). */
  fastIdentify: boolean;
  /** REST requests per second across all routes (Discord: 50). */
  restGlobalRps?: number;
  /** Fetch the delta once the gateway is ready (what a restart needs). */
  deltaOnStart: boolean;
  /** Register `/caseloop` in the bound guild once ready, in the background (default true). */
  registerCommands?: boolean;
  /** Largest receipt capture attached inline (default 10 MiB, Discord's limit for a bot). */
  maxAttachmentBytes?: number;
  /** Shortest time between two edits of a case's live status (default 1.5 s: Discord limits edits per channel). */
  statusEditIntervalMs?: number;
  /** Words that, followed by a colon, mark private text (default: sanitizeReport's). */
  privateMarkers?: readonly string[];
  /** Backoff between registration attempts (default 1 s doubling to 5 min). */
  commandRetry?: CommandRegistrarOptions;
  log: IntakeLog;
  metrics: IntakeMetrics;
  now?: () => Date;
}

/**
 * intake, composed: the index rebuilt from the ledger, the binding checked against the guild,
 * interrupted receipts and deliveries finished, then the gateway, then the delta. The Nest module
 * owns one of these; tests and the benchmark start it directly.
 */
export class IntakeRuntime {
  private constructor(
    readonly gateway: DiscordGateway,
    readonly index: IntakeIndex,
    readonly recorder: SourceRecorder,
    readonly outbox: DeliveryOutbox,
    readonly delta: DeltaFetcher,
    /** Null when command registration is off. */
    readonly commands: CommandRegistrar | null,
    readonly status: StatusUpdater,
    readonly forgetter: SourceForgetter,
    readonly selfId: string,
    private readonly forgetRequests: Subscription,
    private readonly opts: IntakeRuntimeOptions,
  ) {}

  static async start(opts: IntakeRuntimeOptions): Promise<IntakeRuntime> {
    const { ledger, binding, log, metrics } = opts;
    const now = opts.now ?? (() => new Date());
    const keys = await SourceKeys.open(ledger.js, ledger.jsm, ledger.namespace);
    const { index, events } = await loadIntakeIndex(ledger);
    log.info(
      {
        events,
        caseThreads: index.caseThreads.size,
        openIntents: index.openIntents.size,
        unreceipted: index.unreceipted.size,
      },
      'intake index rebuilt',
    );
    const gateway = new DiscordGateway({
      token: opts.token,
      apiUrl: opts.apiUrl,
      readyTimeoutMs: opts.readyTimeoutMs,
      fastIdentify: opts.fastIdentify,
      ...(opts.restGlobalRps ? { restGlobalRps: opts.restGlobalRps } : {}),
    });
    // Messages that arrive while intake finishes starting wait here, in order.
    let early: InboundMessage[] | null = [];
    let recorder: SourceRecorder | null = null;
    let interactions: ((i: AnyInteraction) => void) | null = null;
    let forgetter: SourceForgetter | null = null;
    gateway.listen({
      onMessageCreate: (payload) => {
        const parsed = discordMessagePayload.safeParse(payload);
        if (!parsed.success) {
          log.warn(
            { issues: parsed.error.issues.length },
            'MESSAGE_CREATE does not match the expected shape; ignored',
          );
          return;
        }
        const m = toInbound(parsed.data);
        if (early) early.push(m);
        else recorder?.submit(m, 'gateway');
      },
      onMessageDelete: (payload, bulk) => {
        // A reporter (or a moderator) deleted a message: if it was recorded, its raw text is forgotten.
        for (const id of deletedMessageIds(payload, bulk, binding.guildId)) {
          const sourceId = discordSourceId(id);
          forgetter
            ?.forget(sourceId, 'message_deleted')
            .catch((e: unknown) =>
              log.error({ sourceId, err: (e as Error).message }, 'deleted message not forgotten'),
            );
        }
      },
      onInteraction: (payload) => {
        if (!interactions) return;
        const slash = slashInteractionSchema.safeParse(payload);
        if (slash.success) return interactions({ kind: 'slash', i: slash.data });
        const click = componentInteractionSchema.safeParse(payload);
        if (click.success) return interactions({ kind: 'component', i: click.data });
        const modal = modalInteractionSchema.safeParse(payload);
        if (modal.success) return interactions({ kind: 'modal', i: modal.data });
      },
      onReconnect: () => metrics.gatewayReconnects.inc(),
      onStateChange: (s: GatewayState) => {
        metrics.gatewayReady.set(s === 'ready' ? 1 : 0);
        log.info({ gateway: s }, 'gateway state');
      },
    });
    let registrar: CommandRegistrar | null = null;
    let forgetRequests: Subscription | null = null;
    try {
      // The bot's identity comes with READY (and is read back over REST below).
      const { selfId } = await gateway.connect();
      const rest = gateway.rest;
      const me = await rest.user(selfId);
      const verified = await verifyBindingAgainstDiscord(binding, rest);
      log.info(
        {
          botId: me.id,
          guildId: verified.guild.id,
          channels: verified.channels.length,
          users: verified.users,
        },
        'binding verified',
      );
      const cached = (id: string) => {
        const c = gateway.client.channels.cache.get(id);
        if (!c || !('guildId' in c)) return null;
        return { guildId: c.guildId, isThread: c.isThread(), parentId: c.isThread() ? c.parentId : null };
      };
      const directory = new ChannelDirectory(rest, cached);
      const writer = new IntakeLedgerWriter(ledger.store);
      const outbox = new DeliveryOutbox(
        writer,
        ledger.store,
        rest,
        directory,
        index,
        me.id,
        {
          replyChunkSize: binding.limits.replyChunkSize,
          dedupeWindowMs: opts.dedupeWindowMs,
          reconcileFetchLimit: opts.reconcileFetchLimit,
          ...(opts.maxAttachmentBytes ? { maxAttachmentBytes: opts.maxAttachmentBytes } : {}),
        },
        log,
        metrics,
        now,
      );
      const commands = new ReviewerCommandHandler(ledger.store, binding, outbox, log, metrics, now);
      const rec = new SourceRecorder(
        writer,
        rest,
        directory,
        binding,
        index,
        me.id,
        outbox,
        commands,
        log,
        metrics,
        keys,
        opts.privateMarkers,
        now,
      );
      const forgets = new SourceForgetter(ledger.store, writer, keys, index, log, now);
      const delta = new DeltaFetcher(
        rest,
        binding,
        index,
        rec,
        writer,
        { pageSize: opts.deltaPageSize, backfillMs: opts.deltaBackfillMs },
        log,
        now,
      );
      rec.onLiveFailure = (channelId, messageId) => delta.retryLater(channelId, messageId);
      registrar =
        opts.registerCommands === false
          ? null
          : new CommandRegistrar(
              rest,
              // READY names the application; a bot's application id is its user id otherwise.
              gateway.client.application?.id ?? me.id,
              [binding.guildId],
              APPLICATION_COMMANDS,
              log,
              opts.commandRetry ?? { retryBaseMs: 1_000, retryMaxMs: 300_000 },
              (guild, status) => metrics.commandsRegistered.set({ guild }, status === 'registered' ? 1 : 0),
            );
      const status = new StatusUpdater(
        ledger.store,
        outbox,
        rest,
        log,
        { minEditIntervalMs: opts.statusEditIntervalMs ?? 1_500 },
        () => now().getTime(),
      );
      const finished = await rec.finishInterrupted();
      const erased = await forgets.finishInterrupted();
      if (erased > 0) log.info({ erased }, 'erased the keys of sources forgotten before the last stop');
      forgetter = forgets;
      forgetRequests = listenForForgetRequests(ledger.nc, ledger.namespace, forgets, log);
      const runtime = new IntakeRuntime(
        gateway,
        index,
        rec,
        outbox,
        delta,
        registrar,
        status,
        forgets,
        me.id,
        forgetRequests,
        opts,
      );

      const resumed = await outbox.reconcileOpenIntents().catch((e: unknown) => {
        log.warn({ err: (e as Error).message }, 'reconciliation postponed; the delivery will be retried');
        return 0;
      });
      if (finished.receipts + finished.notices + resumed > 0)
        log.info({ ...finished, deliveries: resumed }, 'finished work interrupted by the last stop');

      recorder = rec;
      interactions = (any) => {
        const { i } = any;
        if (i.guild_id !== binding.guildId || i.member.user.bot) return;
        const caseId = index.caseThreads.get(i.channel_id) ?? null;
        const handled =
          any.kind === 'slash'
            ? (() => {
                const command = parseSlash(any.i.data);
                return command ? commands.handleInteraction(any.i, caseId, command, rest) : Promise.resolve();
              })()
            : any.kind === 'component'
              ? commands.handleComponent(any.i, caseId, rest)
              : commands.handleModal(any.i, caseId, rest);
        handled.catch((e: unknown) =>
          log.error({ interactionId: i.id, err: (e as Error).message }, 'interaction not handled'),
        );
      };
      const waiting = early;
      early = null;
      for (const m of waiting) rec.submit(m, 'gateway');
      // In the background: a guild refusing the commands must not keep intake from its messages.
      registrar?.start();
      if (opts.deltaOnStart) await runtime.fetchDelta(`start-${ulid()}`, null);
      return runtime;
    } catch (e) {
      forgetRequests?.unsubscribe();
      await registrar?.stop();
      await gateway.destroy();
      throw e;
    }
  }

  get gatewayState(): GatewayState {
    return this.gateway.state;
  }

  fetchDelta(requestId: string, causationId: string | null): Promise<DeltaReport> {
    return this.delta.fetch(requestId, causationId);
  }

  /** The coordinator's clock: fetch what the gateway may have missed. */
  async onClockTicked(e: RecordedEvent<'ClockTicked'>): Promise<void> {
    await this.delta.fetch(e.data.deltaRequestId, e.eventId);
  }

  onDeliveryRequested(e: RecordedEvent<'DeliveryRequested'>): Promise<void> {
    return this.outbox.onDeliveryRequested(e);
  }

  /**
   * A case event that moves the live status (STATUS_EVENTS). Progress within a check run
   * (PROGRESS_EVENTS) does not wait for the edit: the case's events are handled one at a time,
   * and Discord's edit interval must not hold them up check by check.
   */
  async onCaseProgress(e: RecordedEvent): Promise<void> {
    if (e.aggregate !== 'case' || !(STATUS_EVENTS as readonly string[]).includes(e.type)) return;
    if ((PROGRESS_EVENTS as readonly string[]).includes(e.type)) return this.status.nudge(e.aggregateId);
    await this.status.request(e.aggregateId);
  }

  /** Graceful: the running delivery finishes, live messages in hand are recorded, then the gateway closes. */
  async stop(): Promise<void> {
    this.forgetRequests.unsubscribe();
    await this.commands?.stop();
    await this.outbox.drain();
    await this.recorder.idle();
    await this.gateway.destroy();
  }
}
