import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { DiscordApiError } from './errors';
import { FAULT_ERRORS, type FaultRule, type InjectedFault } from './faults';
import type { WorldEvent } from './world';

const snowflake = z.string().regex(/^\d{17,20}$/);

const postMessageSchema = z.strictObject({
  channelId: snowflake.optional(),
  threadId: snowflake.optional(),
  authorId: snowflake.optional(),
  content: z.string().max(4000),
  mentionsBot: z.boolean().optional(),
  replyTo: snowflake.optional(),
});

const startThreadSchema = z.strictObject({
  messageId: snowflake,
  name: z.string().min(1).max(100),
  authorId: snowflake.optional(),
});

const slashSchema = z.strictObject({
  authorId: snowflake,
  channelId: snowflake.optional(),
  threadId: snowflake.optional(),
  name: z.string().min(1).max(32),
  subcommand: z.string().min(1).max(32).optional(),
  options: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

const clickSchema = z.strictObject({
  authorId: snowflake,
  messageId: snowflake,
  customId: z.string().min(1).max(100),
});

const modalSchema = z.strictObject({
  authorId: snowflake,
  interactionId: snowflake,
  values: z.record(z.string().max(100), z.string().max(4000)),
});

const faultSchema = z.strictObject({
  method: z.string().optional(),
  path: z.string().min(1),
  /** Treat `path` as a regular expression. */
  regex: z.boolean().optional(),
  status: z
    .union([z.literal(429), z.literal(500), z.literal(502), z.literal(503), z.literal(504)])
    .optional(),
  error: z.enum(FAULT_ERRORS).optional(),
  when: z.enum(['before', 'after']).optional(),
  times: z.number().int().positive().optional(),
  retryAfterMs: z.number().int().nonnegative().optional(),
  delayMs: z.number().int().nonnegative().optional(),
  global: z.boolean().optional(),
});

const applicationSchema = z.strictObject({
  /** false: the bot's invite lacks applications.commands (guild command routes answer 403 50001). */
  applicationCommandsScope: z.boolean(),
  /** Defaults to the sandbox's guild. */
  guildId: snowflake.optional(),
});

const gatewaySchema = z.strictObject({
  action: z.enum(['drop', 'reconnect', 'invalidate', 'close', 'pause', 'resume']),
  resumable: z.boolean().optional(),
  code: z.number().int().min(1000).max(4999).optional(),
});

/**
 * What the control API drives — the local Discord, which owns this API and so must not be
 * imported here: the API sees it only through these calls, and answers with what they return.
 */
export interface ControlledDiscord {
  onEvent(listener: (event: WorldEvent) => void): () => void;
  state(): { application: unknown; gateway: unknown };
  messages(channelId: string): unknown;
  readonly requests: readonly { at: number }[];
  readonly gatewayOps: readonly { at: number }[];
  interactionLog(): unknown;
  commands(): unknown;
  setApplicationCommandsScope(granted: boolean, guildId?: string): void;
  say(input: z.infer<typeof postMessageSchema>): unknown;
  startThread(input: z.infer<typeof startThreadSchema>): unknown;
  slash(input: z.infer<typeof slashSchema>): unknown;
  click(input: z.infer<typeof clickSchema>): unknown;
  submitModal(input: z.infer<typeof modalSchema>): unknown;
  inject(rule: FaultRule): InjectedFault;
  clearFaults(): void;
  dropGateway(): void;
  requestReconnect(): void;
  invalidateSession(resumable: boolean): void;
  closeGateway(code: number): void;
  pauseDispatch(): void;
  resumeDispatch(): void;
}

class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/**
 * The sandbox's JSON control API (for scripts and the web page) and its live feed (server-sent
 * events naming what changed, so the page refetches instead of mirroring state).
 */
export class ControlApi {
  private readonly feeds = new Set<ServerResponse>();
  private readonly unsubscribe: () => void;
  private readonly keepAlive: NodeJS.Timeout;

  constructor(private readonly discord: ControlledDiscord) {
    this.unsubscribe = discord.onEvent((event) => {
      const d = event.d as { channel_id?: unknown; id?: unknown; parent_id?: unknown };
      const channelId =
        typeof d.channel_id === 'string'
          ? d.channel_id
          : typeof d.parent_id === 'string'
            ? d.parent_id
            : null;
      const userId =
        event.t === 'TYPING_START'
          ? (d as { user_id?: unknown }).user_id
          : (d as { author?: { id?: unknown } }).author?.id;
      this.broadcast(event.t, {
        channelId,
        threadId: event.t === 'THREAD_CREATE' ? d.id : undefined,
        userId: typeof userId === 'string' ? userId : undefined,
      });
    });
    this.keepAlive = setInterval(() => {
      for (const feed of this.feeds) feed.write(': keep-alive\n\n');
    }, 15_000);
    this.keepAlive.unref();
  }

  close(): void {
    this.unsubscribe();
    clearInterval(this.keepAlive);
    for (const feed of this.feeds) feed.end();
    this.feeds.clear();
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const json = (status: number, body: unknown): void => {
      const payload = JSON.stringify(body);
      res.writeHead(status, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(payload),
        'Cache-Control': 'no-store',
      });
      res.end(payload);
    };
    try {
      const discord = this.discord;
      let m: RegExpExecArray | null;
      if (method === 'GET' && path === '/sandbox/state') return json(200, discord.state());
      if (method === 'GET' && path === '/sandbox/events') return this.openFeed(req, res);
      if (method === 'GET' && (m = /^\/sandbox\/channels\/(\d{17,20})\/messages$/.exec(path))) {
        return json(200, discord.messages(m[1] as string));
      }
      if (method === 'GET' && path === '/sandbox/requests') {
        const since = Number(url.searchParams.get('since') ?? '0');
        return json(200, {
          requests: discord.requests.filter((r) => r.at >= since),
          gateway: discord.gatewayOps.filter((o) => o.at >= since),
        });
      }
      if (method === 'GET' && path === '/sandbox/interactions') return json(200, discord.interactionLog());
      if (method === 'GET' && path === '/sandbox/commands') return json(200, discord.commands());
      if (method === 'POST' && path === '/sandbox/application') {
        const input = parse(applicationSchema, await readJson(req));
        discord.setApplicationCommandsScope(input.applicationCommandsScope, input.guildId);
        return json(200, discord.state().application);
      }
      if (method === 'POST' && path === '/sandbox/messages') {
        const input = parse(postMessageSchema, await readJson(req));
        return json(200, discord.say(input));
      }
      if (method === 'POST' && path === '/sandbox/threads') {
        const input = parse(startThreadSchema, await readJson(req));
        return json(200, discord.startThread(input));
      }
      if (method === 'POST' && path === '/sandbox/interactions') {
        const input = parse(slashSchema, await readJson(req));
        return json(200, discord.slash(input));
      }
      if (method === 'POST' && path === '/sandbox/components') {
        const input = parse(clickSchema, await readJson(req));
        return json(200, discord.click(input));
      }
      if (method === 'POST' && path === '/sandbox/modals') {
        const input = parse(modalSchema, await readJson(req));
        return json(200, discord.submitModal(input));
      }
      if (method === 'POST' && path === '/sandbox/faults') {
        const { regex, path: pattern, ...rule } = parse(faultSchema, await readJson(req));
        const fault = discord.inject({ ...rule, path: regex ? new RegExp(pattern) : pattern });
        return json(200, { remaining: fault.remaining });
      }
      if (method === 'DELETE' && path === '/sandbox/faults') {
        discord.clearFaults();
        return json(200, { cleared: true });
      }
      if (method === 'POST' && path === '/sandbox/gateway') {
        const input = parse(gatewaySchema, await readJson(req));
        switch (input.action) {
          case 'drop':
            discord.dropGateway();
            break;
          case 'reconnect':
            discord.requestReconnect();
            break;
          case 'invalidate':
            discord.invalidateSession(input.resumable ?? false);
            break;
          case 'close':
            discord.closeGateway(input.code ?? 4000);
            break;
          case 'pause':
            discord.pauseDispatch();
            break;
          case 'resume':
            discord.resumeDispatch();
            break;
        }
        return json(200, discord.state().gateway);
      }
      throw new ControlError(404, `no control route ${method} ${path}`);
    } catch (error) {
      if (error instanceof ControlError)
        return json(error.status, { error: error.message, details: error.details });
      if (error instanceof DiscordApiError)
        return json(error.status, { error: error.message, code: error.code, details: error.errors });
      if (error instanceof Error && /^no (channel|user|role|reporter|reviewer|stranger)/.test(error.message))
        return json(400, { error: error.message });
      throw error;
    }
  }

  private openFeed(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    res.write('retry: 1000\n\n');
    this.feeds.add(res);
    req.on('close', () => this.feeds.delete(res));
  }

  private broadcast(type: string, data: unknown): void {
    const frame = `event: change\ndata: ${JSON.stringify({ type, ...(data as object) })}\n\n`;
    for (const feed of this.feeds) feed.write(frame);
  }
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (!result.success) {
    throw new ControlError(
      400,
      'invalid request body',
      result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    );
  }
  return result.data;
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 1024 * 1024) {
        reject(new ControlError(413, 'body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (chunks.length === 0) return resolve({});
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new ControlError(400, 'body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}
