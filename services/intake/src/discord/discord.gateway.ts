import { Client, Events, GatewayIntentBits, Options } from 'discord.js';
import { BotToken } from '../binding/token-file';
import { describeCloseCode } from './discord.errors';
import { DiscordRest } from './discord.rest';

export type GatewayState = 'idle' | 'connecting' | 'ready' | 'reconnecting' | 'closed' | 'failed';

export interface GatewayOptions {
  token: BotToken;
  /** `http://127.0.0.1:PORT/api` for a local Discord; null for discord.com. */
  apiUrl: string | null;
  readyTimeoutMs: number;
  /** Tests and the sandbox re-identify quickly; discord.com needs the default 5 s throttle. */
  fastIdentify?: boolean;
  /** Discord's global limit is 50 requests per second per bot; discord.js queues beyond it. */
  restGlobalRps?: number;
}

/** The errors @discordjs/ws raises for the fatal close codes, by message. */
const FATAL_CLOSE_MESSAGES: Readonly<Record<string, number>> = {
  'Authentication failed': 4004,
  'Invalid shard': 4010,
  'Sharding is required': 4011,
  'Used an invalid API version': 4012,
  'Used invalid intents': 4013,
  'Used disallowed intents': 4014,
};

export class GatewayClosedError extends Error {
  constructor(
    readonly closeCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'GatewayClosedError';
  }
}

export interface GatewayListeners {
  /** Every MESSAGE_CREATE payload, unvalidated (the caller validates). */
  onMessageCreate(payload: unknown): void;
  /** Every MESSAGE_DELETE and MESSAGE_DELETE_BULK payload, unvalidated. */
  onMessageDelete(payload: unknown, bulk: boolean): void;
  /** Every INTERACTION_CREATE payload, unvalidated. */
  onInteraction(payload: unknown): void;
  onReconnect(): void;
  onStateChange(state: GatewayState): void;
}

/**
 * The discord.js client, behind the few things intake needs from it. Messages are taken from the
 * raw dispatch stream so that a message in a thread discord.js has not cached is still seen, and
 * so that intake validates exactly what Discord sent.
 */
export class DiscordGateway {
  readonly client: Client;
  readonly rest: DiscordRest;
  #state: GatewayState = 'idle';
  #listeners: GatewayListeners | null = null;

  constructor(private readonly opts: GatewayOptions) {
    this.client = new Client({
      intents: [
        GatewayIntentBits.Guilds,
        GatewayIntentBits.GuildMessages,
        GatewayIntentBits.MessageContent,
        GatewayIntentBits.GuildMessageReactions,
      ],
      // Intake reads messages from raw dispatches; caching them would only cost memory.
      makeCache: Options.cacheWithLimits({ ...Options.DefaultMakeCacheSettings, MessageManager: 0 }),
      rest: {
        ...(opts.apiUrl ? { api: opts.apiUrl } : {}),
        globalRequestsPerSecond: opts.restGlobalRps ?? 50,
      },
      ...(opts.fastIdentify
        ? { ws: { buildIdentifyThrottler: async () => ({ waitForIdentify: async () => undefined }) } }
        : {}),
    });
    this.client.rest.setToken(opts.token.reveal());
    this.rest = new DiscordRest(this.client.rest);
    this.client.on(Events.Raw, (packet: { t?: string | null; d?: unknown }) => {
      if (packet.t === 'MESSAGE_CREATE') this.#listeners?.onMessageCreate(packet.d);
      else if (packet.t === 'INTERACTION_CREATE') this.#listeners?.onInteraction(packet.d);
      else if (packet.t === 'MESSAGE_DELETE') this.#listeners?.onMessageDelete(packet.d, false);
      else if (packet.t === 'MESSAGE_DELETE_BULK') this.#listeners?.onMessageDelete(packet.d, true);
    });
    this.client.on(Events.ShardReconnecting, () => {
      this.#setState('reconnecting');
      this.#listeners?.onReconnect();
    });
    this.client.on(Events.ShardResume, () => this.#setState('ready'));
    this.client.on(Events.ShardReady, () => this.#setState('ready'));
    this.client.on(Events.ShardDisconnect, () => this.#setState('failed'));
  }

  get state(): GatewayState {
    return this.#state;
  }

  get selfId(): string | null {
    return this.client.user?.id ?? null;
  }

  listen(listeners: GatewayListeners): void {
    this.#listeners = listeners;
  }

  /** Logs in and resolves on READY (all guilds received); a fatal close code rejects in words. */
  async connect(): Promise<{ selfId: string }> {
    this.#setState('connecting');
    const ready = new Promise<{ selfId: string }>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the gateway did not become ready within ${this.opts.readyTimeoutMs} ms`)),
        this.opts.readyTimeoutMs,
      );
      this.client.once(Events.ClientReady, (c) => {
        clearTimeout(timer);
        resolve({ selfId: c.user.id });
      });
      this.client.once(Events.ShardDisconnect, (ev: { code: number }) => {
        clearTimeout(timer);
        reject(new GatewayClosedError(ev.code, describeCloseCode(ev.code)));
      });
    });
    ready.catch(() => undefined);
    try {
      await this.client.login(this.opts.token.reveal());
    } catch (e) {
      // @discordjs/ws rejects login with a bare message for fatal close codes; name the code instead.
      const code = FATAL_CLOSE_MESSAGES[(e as Error).message];
      this.#setState('failed');
      throw code ? new GatewayClosedError(code, describeCloseCode(code)) : e;
    }
    const r = await ready;
    this.#setState('ready');
    return r;
  }

  /** Bounded: discord.js can hang destroying a client that never became ready. */
  async destroy(timeoutMs = 5_000): Promise<void> {
    this.#listeners = null;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.client.destroy().catch(() => undefined),
      new Promise<void>((r) => {
        timer = setTimeout(r, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    this.#setState('closed');
  }

  #setState(s: GatewayState): void {
    if (this.#state === s) return;
    this.#state = s;
    this.#listeners?.onStateChange(s);
  }
}
