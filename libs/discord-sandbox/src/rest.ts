import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ApplicationCommands, renderCommand } from './application-commands';
import { DISCORD_ERRORS, DiscordApiError, invalidForm } from './errors';
import { type FaultInjector, type RateLimiter, rateLimitHeaders, bucketHash } from './faults';
import { parseMultipart } from './multipart';
import { parseOverwriteBody, Permission } from './permissions';
import { isSnowflake } from './snowflake';
import type { DiscordWorld, Json, MessageRecord, PostMessageInput } from './world';
import type { Worlds } from './worlds';
import { CHANNEL_TYPE } from './world-types';

export interface RestRequestRecord {
  at: number;
  method: string;
  /** Path under /api/v10, without the query string. */
  path: string;
  /** The route template, e.g. `/channels/:channel/messages`. */
  route: string | null;
  query: Record<string, string>;
  body: unknown;
  status: number;
  /** Set when an injected fault or an exceeded rate limit shaped the answer. */
  fault: 'before' | 'after' | 'delay' | 'rate-limit' | null;
}

interface RouteContext {
  /** The guild the route addresses (by its guild or channel parameter), else the primary one. */
  world: DiscordWorld;
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  /** Multipart file parts; `index` is the n of a `files[n]` part name (null for other names). */
  files: { filename: string; contentType: string | null; data: Buffer; index: number | null }[];
}

interface RouteResult {
  status: number;
  body?: unknown;
}

interface Route {
  method: string;
  template: string;
  segments: string[];
  /** Rate-limit buckets split by this parameter, as Discord's do. */
  major: string | null;
  /** Interaction callbacks authenticate by their token, not the bot token. */
  auth: boolean;
  handle(ctx: RouteContext): RouteResult | Promise<RouteResult>;
}

export interface InteractionCallbacks {
  callback(interactionId: string, token: string, body: unknown, query: URLSearchParams): RouteResult;
  editOriginal(applicationId: string, token: string, body: unknown): RouteResult;
  followUp(applicationId: string, token: string, body: unknown): RouteResult;
}

export interface RestApiDeps {
  worlds: Worlds;
  token: string;
  gatewayUrl: () => string;
  faults: FaultInjector;
  limiter: RateLimiter;
  log: (record: RestRequestRecord) => void;
  /** Every answer with its body, for whoever listens (the contract test); nothing is kept. */
  exchange?: (record: RestRequestRecord, responseBody: unknown, contentType: string | null) => void;
  sessionStartLimit: () => { total: number; remaining: number; reset_after: number; max_concurrency: number };
  storeAttachment: (attachmentId: string, data: Buffer, contentType: string | null) => void;
  interactions: InteractionCallbacks;
  /** Bytes of files one message may carry (Discord: 10 MiB for a bot in a guild without boosts). */
  attachmentSizeLimit: number;
  commands: ApplicationCommands;
  now: () => number;
}

const MAX_BODY_BYTES = 25 * 1024 * 1024;

const P = Permission;
/** The send right where the message goes: SEND_MESSAGES in a channel, SEND_MESSAGES_IN_THREADS in a thread. */
const sendRight = (world: DiscordWorld, channelId: string): bigint =>
  world.messageable(channelId).kind === 'thread' ? P.SEND_MESSAGES_IN_THREADS : P.SEND_MESSAGES;

/** REST v10: routing, auth, rate-limit headers, injected faults and Discord-shaped errors. */
export class RestApi {
  private readonly routes: Route[] = [];

  constructor(private readonly deps: RestApiDeps) {
    const r = (
      method: string,
      template: string,
      major: string | null,
      handle: Route['handle'],
      auth = true,
    ): void => {
      this.routes.push({ method, template, segments: template.split('/'), major, auth, handle });
    };

    r('GET', '/gateway', null, () => ({ status: 200, body: { url: deps.gatewayUrl() } }), false);
    r('GET', '/gateway/bot', null, () => ({
      status: 200,
      body: { url: deps.gatewayUrl(), shards: 1, session_start_limit: deps.sessionStartLimit() },
    }));
    r('GET', '/users/@me', null, ({ world }) => ({
      status: 200,
      body: {
        ...world.renderUser(world.user(world.botId)),
        verified: true,
        mfa_enabled: false,
        locale: 'en-US',
      },
    }));
    r('GET', '/users/:user', null, ({ world, params }) => ({
      status: 200,
      body: world.renderUser(world.user(param(params, 'user'))),
    }));
    r('GET', '/applications/@me', null, ({ world }) => ({
      status: 200,
      body: renderApplication(world),
    }));
    // Application commands: a bot token manages only its own application's; guild routes need the
    // guild to have authorised the applications.commands scope (else 403 Missing Access).
    const ownApplication = (world: DiscordWorld, params: Record<string, string>): void => {
      if (param(params, 'application') !== world.applicationId)
        throw new DiscordApiError('notApplicationOwner');
    };
    r('GET', '/applications/:application/commands', null, ({ world, params }) => {
      ownApplication(world, params);
      return { status: 200, body: deps.commands.read(null).map(renderCommand) };
    });
    r('PUT', '/applications/:application/commands', null, ({ world, params, body }) => {
      ownApplication(world, params);
      return { status: 200, body: deps.commands.overwrite(null, body).map(renderCommand) };
    });
    r('GET', '/applications/:application/guilds/:guild/commands', 'guild', ({ world, params }) => {
      ownApplication(world, params);
      return { status: 200, body: deps.commands.read(world.guildId).map(renderCommand) };
    });
    r('PUT', '/applications/:application/guilds/:guild/commands', 'guild', ({ world, params, body }) => {
      ownApplication(world, params);
      return { status: 200, body: deps.commands.overwrite(world.guildId, body).map(renderCommand) };
    });
    r('GET', '/guilds/:guild', 'guild', ({ world }) => {
      return {
        status: 200,
        body: {
          ...world.renderGuild(),
          approximate_member_count: world.users.size,
          approximate_presence_count: 0,
        },
      };
    });
    r('GET', '/guilds/:guild/channels', 'guild', ({ world }) => {
      return { status: 200, body: [...world.channels.values()].map((c) => world.renderChannel(c)) };
    });
    r('GET', '/guilds/:guild/roles', 'guild', ({ world }) => {
      return { status: 200, body: [...world.roles.values()].map((role) => world.renderRole(role)) };
    });
    r('GET', '/guilds/:guild/members', 'guild', ({ world, query }) => {
      const limit = intParam(query, 'limit', 1, 1000, 1);
      const after = query.get('after') ?? '0';
      const members = [...world.users.values()]
        .filter((u) => BigInt(u.id) > BigInt(isSnowflake(after) ? after : '0'))
        .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
        .slice(0, limit);
      return { status: 200, body: members.map((u) => world.renderMember(u, true)) };
    });
    r('GET', '/guilds/:guild/members/:user', 'guild', ({ world, params }) => {
      return { status: 200, body: world.renderMember(world.member(param(params, 'user')), true) };
    });
    r('GET', '/guilds/:guild/threads/active', 'guild', ({ world }) => {
      return { status: 200, body: activeThreadsBody(world) };
    });
    r('GET', '/channels/:channel', 'channel', ({ world, params }) => {
      const target = world.messageable(param(params, 'channel'));
      world.requirePermissions(world.botId, param(params, 'channel'), P.VIEW_CHANNEL);
      return {
        status: 200,
        body:
          target.kind === 'channel'
            ? world.renderChannel(target.channel)
            : world.renderThread(target.thread, world.botId),
      };
    });
    r('PATCH', '/channels/:channel', 'channel', ({ world, params, body }) => {
      const channelId = param(params, 'channel');
      const target = world.messageable(channelId);
      world.requirePermissions(world.botId, channelId, P.VIEW_CHANNEL);
      const payload = asObject(body);
      if (target.kind === 'channel') {
        world.requirePermissions(world.botId, channelId, P.MANAGE_CHANNELS);
        return { status: 200, body: world.renderChannel(world.updateChannel(channelId, payload)) };
      }
      const manageThreads = (world.permissionsIn(world.botId, channelId) & P.MANAGE_THREADS) !== 0n;
      const thread = world.modifyThread(channelId, world.botId, manageThreads, payload);
      return { status: 200, body: world.renderThread(thread, world.botId) };
    });
    r('GET', '/channels/:channel/messages', 'channel', ({ world, params, query }) => {
      const limit = intParam(query, 'limit', 1, 100, 50);
      const cursor = (name: string): string | null => {
        const value = query.get(name);
        if (value === null) return null;
        if (!isSnowflake(value))
          throw invalidForm([name], 'NUMBER_TYPE_COERCE', `Value "${value}" is not snowflake.`);
        return value;
      };
      const channelId = param(params, 'channel');
      world.requirePermissions(world.botId, channelId, P.VIEW_CHANNEL);
      // Without READ_MESSAGE_HISTORY Discord answers with no messages, not an error.
      if ((world.permissionsIn(world.botId, channelId) & P.READ_MESSAGE_HISTORY) === 0n)
        return { status: 200, body: [] };
      const page = world.history(channelId, {
        after: cursor('after'),
        before: cursor('before'),
        around: cursor('around'),
        limit,
      });
      return { status: 200, body: page.map((m) => readable(world, m)) };
    });
    r('GET', '/channels/:channel/messages/:message', 'channel', ({ world, params }) => {
      world.requirePermissions(
        world.botId,
        param(params, 'channel'),
        P.VIEW_CHANNEL | P.READ_MESSAGE_HISTORY,
      );
      return {
        status: 200,
        body: readable(world, world.message(param(params, 'channel'), param(params, 'message'))),
      };
    });
    r('POST', '/channels/:channel/messages', 'channel', ({ world, params, body, files }) => {
      const payload = asObject(body);
      const channelId = param(params, 'channel');
      world.requirePermissions(
        world.botId,
        channelId,
        P.VIEW_CHANNEL | sendRight(world, channelId) | (files.length > 0 ? P.ATTACH_FILES : 0n),
      );
      // A reply without READ_MESSAGE_HISTORY is its own refusal, not 50013: 403 160002 "Cannot reply
      // without permission to read message history" (Opcodes and Status Codes, JSON error codes).
      if (
        isObject(payload.message_reference) &&
        (world.permissionsIn(world.botId, channelId) & P.READ_MESSAGE_HISTORY) === 0n
      )
        throw new DiscordApiError('cannotReplyWithoutHistory');
      // Without EMBED_LINKS Discord posts the message and drops its embeds.
      const mayEmbed = (world.permissionsIn(world.botId, channelId) & P.EMBED_LINKS) !== 0n;
      const attachmentsMeta = Array.isArray(payload.attachments) ? (payload.attachments as Json[]) : [];
      const input: PostMessageInput = {
        channelId,
        authorId: world.botId,
        content: optionalString(payload, 'content'),
        nonce:
          typeof payload.nonce === 'string' || typeof payload.nonce === 'number' ? payload.nonce : undefined,
        enforceNonce: payload.enforce_nonce === true,
        tts: payload.tts === true,
        embeds: mayEmbed && Array.isArray(payload.embeds) ? (payload.embeds as Json[]) : [],
        components: Array.isArray(payload.components) ? (payload.components as Json[]) : [],
        stickerIds: Array.isArray(payload.sticker_ids) ? payload.sticker_ids.map(String) : [],
        // `attachments: [{ id: n, filename }]` names the part `files[n]`; without it the part's own filename stands.
        attachments: files.map((f, i) => {
          const meta = attachmentsMeta.find((a) => String(a.id) === String(f.index ?? i));
          return {
            filename: typeof meta?.filename === 'string' ? meta.filename : f.filename,
            size: f.data.length,
            contentType: f.contentType,
          };
        }),
        allowedMentions: payload.allowed_mentions,
        messageReference: isObject(payload.message_reference)
          ? (payload.message_reference as PostMessageInput['messageReference'])
          : null,
      };
      const total = files.reduce((n, f) => n + f.data.length, 0);
      if (total > deps.attachmentSizeLimit) throw new DiscordApiError('entityTooLarge');
      if (files.length > 10)
        throw invalidForm(['files'], 'BASE_TYPE_MAX_LENGTH', 'Must be 10 or fewer in length.');
      const { message, created } = world.postMessage(input);
      if (created)
        message.attachments.forEach((a, i) =>
          deps.storeAttachment(a.id, files[i]?.data ?? Buffer.alloc(0), a.contentType),
        );
      return { status: 200, body: world.renderMessage(message, { nonce: true }) };
    });
    r('PATCH', '/channels/:channel/messages/:message', 'channel', ({ world, params, body }) => {
      const payload = asObject(body);
      // `attachments` lists the ones to keep (by id); left out, they all stay.
      const keep = Array.isArray(payload.attachments)
        ? (payload.attachments as Json[]).map((a) => String(a.id))
        : undefined;
      world.requirePermissions(world.botId, param(params, 'channel'), P.VIEW_CHANNEL);
      const message = world.editMessage(
        param(params, 'channel'),
        param(params, 'message'),
        payload.content,
        world.botId,
        {
          ...(payload.embeds !== undefined ? { embeds: payload.embeds } : {}),
          ...(payload.components !== undefined ? { components: payload.components } : {}),
          ...(keep ? { keepAttachmentIds: keep } : {}),
        },
      );
      return { status: 200, body: world.renderMessage(message) };
    });
    r('DELETE', '/channels/:channel/messages/:message', 'channel', ({ world, params }) => {
      world.requirePermissions(world.botId, param(params, 'channel'), P.VIEW_CHANNEL);
      world.deleteMessage(param(params, 'channel'), param(params, 'message'), world.botId);
      return { status: 204 };
    });
    r('PUT', '/channels/:channel/messages/:message/reactions/:emoji/@me', 'channel', ({ world, params }) => {
      // READ_MESSAGE_HISTORY always; ADD_REACTIONS unless someone already reacted with this emoji.
      const channelId = param(params, 'channel');
      world.requirePermissions(world.botId, channelId, P.VIEW_CHANNEL | P.READ_MESSAGE_HISTORY);
      const emoji = decodeEmoji(param(params, 'emoji'));
      const existing = world
        .reactionsOn(world.message(channelId, param(params, 'message')).id)
        .some((x) => (x.emoji.id ?? x.emoji.name) === emoji && x.userIds.length > 0);
      if (!existing) world.requirePermissions(world.botId, channelId, P.ADD_REACTIONS);
      world.addReaction(
        param(params, 'channel'),
        param(params, 'message'),
        decodeEmoji(param(params, 'emoji')),
        world.botId,
      );
      return { status: 204 };
    });
    r(
      'DELETE',
      '/channels/:channel/messages/:message/reactions/:emoji/@me',
      'channel',
      ({ world, params }) => {
        world.requirePermissions(world.botId, param(params, 'channel'), P.VIEW_CHANNEL);
        world.removeReaction(
          param(params, 'channel'),
          param(params, 'message'),
          decodeEmoji(param(params, 'emoji')),
          world.botId,
        );
        return { status: 204 };
      },
    );
    r('GET', '/channels/:channel/messages/:message/reactions/:emoji', 'channel', ({ world, params }) => {
      const channelId = param(params, 'channel');
      world.requirePermissions(world.botId, channelId, P.VIEW_CHANNEL | P.READ_MESSAGE_HISTORY);
      const message = world.message(channelId, param(params, 'message'));
      const emoji = decodeEmoji(param(params, 'emoji'));
      const reaction = world.reactionsOn(message.id).find((x) => (x.emoji.id ?? x.emoji.name) === emoji);
      return { status: 200, body: (reaction?.userIds ?? []).map((u) => world.renderUser(world.user(u))) };
    });
    r('POST', '/channels/:channel/typing', 'channel', ({ world, params }) => {
      const channelId = param(params, 'channel');
      world.requirePermissions(world.botId, channelId, P.VIEW_CHANNEL | sendRight(world, channelId));
      world.typing(param(params, 'channel'), world.botId);
      return { status: 204 };
    });
    r('POST', '/channels/:channel/messages/:message/threads', 'channel', ({ world, params, body }) => {
      world.requirePermissions(
        world.botId,
        param(params, 'channel'),
        P.VIEW_CHANNEL | P.CREATE_PUBLIC_THREADS,
      );
      const payload = asObject(body);
      const thread = world.startThreadFromMessage(
        param(params, 'channel'),
        param(params, 'message'),
        payload.name,
        world.botId,
        payload.auto_archive_duration,
      );
      return { status: 201, body: world.renderThread(thread, world.botId) };
    });
    r('POST', '/channels/:channel/threads', 'channel', ({ world, params, body }) => {
      const payload = asObject(body);
      // `type` defaults to PRIVATE_THREAD (Channel resource, Start Thread without Message).
      const isPublic = payload.type === CHANNEL_TYPE.publicThread;
      world.requirePermissions(
        world.botId,
        param(params, 'channel'),
        P.VIEW_CHANNEL | (isPublic ? P.CREATE_PUBLIC_THREADS : P.CREATE_PRIVATE_THREADS),
      );
      const thread = world.startThread(
        param(params, 'channel'),
        payload.name,
        world.botId,
        payload.auto_archive_duration,
        { type: payload.type, invitable: payload.invitable },
      );
      return { status: 201, body: world.renderThread(thread, world.botId) };
    });
    // Overwrites need MANAGE_ROLES, and a bot may allow or deny only what it holds itself there.
    const manageOverwrites = (world: DiscordWorld, channelId: string, bits: bigint): void => {
      world.requirePermissions(world.botId, channelId, P.VIEW_CHANNEL | P.MANAGE_ROLES);
      if ((bits & ~world.permissionsIn(world.botId, channelId)) !== 0n)
        throw new DiscordApiError('missingPermissions');
    };
    r('PUT', '/channels/:channel/permissions/:overwrite', 'channel', ({ world, params, body }) => {
      const channelId = param(params, 'channel');
      const overwrite = parseOverwriteBody(param(params, 'overwrite'), asObject(body));
      manageOverwrites(world, channelId, overwrite.allow | overwrite.deny);
      world.setPermissionOverwrite(channelId, overwrite);
      return { status: 204 };
    });
    r('DELETE', '/channels/:channel/permissions/:overwrite', 'channel', ({ world, params }) => {
      const channelId = param(params, 'channel');
      manageOverwrites(world, channelId, 0n);
      world.deletePermissionOverwrite(channelId, param(params, 'overwrite'));
      return { status: 204 };
    });
    r(
      'POST',
      '/interactions/:interaction/:token/callback',
      'interaction',
      ({ params, body, query }) =>
        deps.interactions.callback(param(params, 'interaction'), param(params, 'token'), body, query),
      false,
    );
    r(
      'PATCH',
      '/webhooks/:application/:token/messages/@original',
      'token',
      ({ params, body }) =>
        deps.interactions.editOriginal(param(params, 'application'), param(params, 'token'), body),
      false,
    );
    r(
      'POST',
      '/webhooks/:application/:token',
      'token',
      ({ params, body }) =>
        deps.interactions.followUp(param(params, 'application'), param(params, 'token'), body),
      false,
    );
  }

  /** Every route served, as `METHOD /template/:param` pairs (the contract test covers each). */
  routeTable(): { method: string; template: string }[] {
    return this.routes.map((r) => ({ method: r.method, template: r.template }));
  }

  async handle(req: IncomingMessage, res: ServerResponse, rawPath: string, search: string): Promise<void> {
    const { deps } = this;
    const method = (req.method ?? 'GET').toUpperCase();
    const requestContentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim() || null;
    const query = new URLSearchParams(search);
    const record: RestRequestRecord = {
      at: deps.now(),
      method,
      path: rawPath,
      route: null,
      query: Object.fromEntries(query),
      body: null,
      status: 0,
      fault: null,
    };
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      record.status = status;
      deps.log(record);
      deps.exchange?.(record, body, requestContentType);
      if (res.destroyed) return;
      const payload = body === undefined ? '' : JSON.stringify(body);
      res.writeHead(status, {
        ...headers,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        'Content-Length': Buffer.byteLength(payload),
        Via: '1.1 caseloop-local-discord',
      });
      res.end(payload);
    };

    let raw: Buffer;
    try {
      raw = await readBody(req);
    } catch {
      send(413, { code: 0, message: 'Request entity too large' });
      return;
    }

    const match = this.match(method, rawPath);
    if (!match) {
      record.body = raw.length > 0 ? safeJson(raw) : null;
      send(
        match === null ? 404 : 405,
        match === null
          ? { message: '404: Not Found', code: 0 }
          : { message: '405: Method Not Allowed', code: 0 },
      );
      return;
    }
    const { route, params } = match;
    record.route = route.template;

    let body: unknown = null;
    let files: RouteContext['files'] = [];
    const contentType = req.headers['content-type'] ?? '';
    try {
      if (raw.length > 0 && contentType.startsWith('multipart/form-data')) {
        const parts = parseMultipart(raw, contentType);
        const payloadPart = parts.find((p) => p.name === 'payload_json');
        body = payloadPart ? JSON.parse(payloadPart.data.toString('utf8')) : {};
        files = parts
          .filter((p) => p.filename !== null)
          .map((p) => {
            const n = /^files\[(\d+)\]$/.exec(p.name)?.[1];
            return {
              filename: p.filename as string,
              contentType: p.contentType,
              data: p.data,
              index: n === undefined ? null : Number(n),
            };
          });
        record.body = {
          ...(asObject(body) as object),
          files: files.map((f) => ({ filename: f.filename, size: f.data.length })),
        };
      } else if (raw.length > 0) {
        body = JSON.parse(raw.toString('utf8'));
        record.body = body;
      }
    } catch {
      send(400, { code: 50109, message: 'The request body contains invalid JSON.' });
      return;
    }

    if (route.auth && req.headers.authorization !== `Bot ${deps.token}`) {
      send(401, { message: '401: Unauthorized', code: 0 });
      return;
    }

    const major = route.major ? (params[route.major] ?? '') : '';
    const fault = deps.faults.take(method, rawPath);
    const delay = async (): Promise<void> => {
      if (!fault?.delayMs) return;
      record.fault = record.fault ?? 'delay';
      await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    };
    if (fault?.when !== 'after') await delay();
    if (fault?.error && fault.when !== 'after') {
      record.fault = 'before';
      send(DISCORD_ERRORS[fault.error].status, new DiscordApiError(fault.error).body());
      return;
    }
    if (fault?.status && fault.when !== 'after') {
      record.fault = 'before';
      this.answerFault(fault.status, fault.retryAfterMs ?? 1000, fault.global === true, method, route, send);
      return;
    }

    const limit = deps.limiter.consume(method, route.template, major);
    if (limit.exceeded) {
      record.fault = 'rate-limit';
      this.answerFault(429, limit.resetAfterMs, false, method, route, send, limit.limit);
      return;
    }

    let result: RouteResult;
    try {
      const world =
        params.guild !== undefined
          ? deps.worlds.byGuild(params.guild)
          : params.channel !== undefined
            ? deps.worlds.byChannel(params.channel)
            : deps.worlds.primary;
      result = await route.handle({ world, params, query, body, files });
    } catch (error) {
      if (error instanceof DiscordApiError) {
        send(error.status, error.body(), rateLimitHeaders(limit));
        return;
      }
      // A defect in the stand-in, not a Discord answer: say so in the body so the failing test shows it.
      send(500, {
        code: 0,
        message: '500: Internal Server Error',
        localDiscordDefect: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    if (fault?.when === 'after') {
      record.fault = 'after';
      await delay();
    }
    if (fault?.error && fault.when === 'after') {
      send(DISCORD_ERRORS[fault.error].status, new DiscordApiError(fault.error).body());
      return;
    }
    if (fault?.status && fault.when === 'after') {
      this.answerFault(fault.status, fault.retryAfterMs ?? 1000, fault.global === true, method, route, send);
      return;
    }
    send(result.status, result.status === 204 ? undefined : result.body, rateLimitHeaders(limit));
  }

  /**
   * 429 as Discord sends it: `Retry-After` in whole seconds (rounded up), the body's `retry_after`
   * fractional, `code` 0, and the route's own `X-RateLimit-*` headers (its bucket's limit, nothing
   * left).
   */
  private answerFault(
    status: number,
    retryAfterMs: number,
    global: boolean,
    method: string,
    route: Route,
    send: (status: number, body: unknown, headers?: Record<string, string>) => void,
    bucketLimit: number = this.deps.limiter.limit,
  ): void {
    if (status === 429) {
      const wait = Math.max(0, retryAfterMs);
      const seconds = Math.round(wait) / 1000;
      const headers: Record<string, string> = {
        ...rateLimitHeaders({
          limit: bucketLimit,
          remaining: 0,
          resetAt: this.deps.now() + wait,
          resetAfterMs: wait,
          bucket: bucketHash(method, route.template),
        }),
        'Retry-After': String(Math.max(1, Math.ceil(wait / 1000))),
        'X-RateLimit-Scope': global ? 'global' : 'user',
      };
      if (global) headers['X-RateLimit-Global'] = 'true';
      send(429, { message: 'You are being rate limited.', retry_after: seconds, global, code: 0 }, headers);
      return;
    }
    const text =
      {
        500: 'Internal Server Error',
        502: 'Bad Gateway',
        503: 'Service Unavailable',
        504: 'Gateway Timeout',
      }[status] ?? 'Error';
    send(status, { message: `${status}: ${text}`, code: 0 });
  }

  /** The route for a path; undefined when the path exists under another method, null when it does not exist. */
  private match(
    method: string,
    path: string,
  ): { route: Route; params: Record<string, string> } | undefined | null {
    const segments = path.split('/');
    let pathExists = false;
    for (const route of this.routes) {
      if (route.segments.length !== segments.length) continue;
      const params: Record<string, string> = {};
      const ok = route.segments.every((seg, i) => {
        const got = segments[i] as string;
        if (seg.startsWith(':')) {
          if (got.length === 0) return false;
          params[seg.slice(1)] = got;
          return true;
        }
        // Literal segments may arrive percent-encoded (discord.js sends `/users/%40me`).
        return seg === got || seg === decodeSegment(got);
      });
      if (!ok) continue;
      pathExists = true;
      if (route.method === method) return { route, params };
    }
    return pathExists ? undefined : null;
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const safeJson = (raw: Buffer): unknown => {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return raw.toString('utf8').slice(0, 200);
  }
};

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function asObject(body: unknown): Json {
  if (body === null || body === undefined) return {};
  if (!isObject(body))
    throw invalidForm(['_root'], 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
  return body;
}

function optionalString(payload: Json, key: string): string | undefined {
  const value = payload[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidForm([key], 'BASE_TYPE_BAD_TYPE', 'Must be a string.');
  return value;
}

function param(params: Record<string, string>, name: string): string {
  const value = params[name];
  if (value === undefined) throw new DiscordApiError('notFound');
  return value;
}

function intParam(query: URLSearchParams, name: string, min: number, max: number, fallback: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidForm([name], 'NUMBER_TYPE_MAX', `int value should be between ${min} and ${max}.`);
  }
  return value;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Path segments must arrive percent-encoded; a raw or undecodable emoji is unknown to Discord. */
function decodeEmoji(segment: string): string {
  if (!/^[A-Za-z0-9%:_.~-]+$/.test(segment)) throw new DiscordApiError('unknownEmoji');
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new DiscordApiError('unknownEmoji');
  }
}

function readable(world: DiscordWorld, message: MessageRecord): Json {
  const rendered = world.renderMessage(message);
  return world.messageContentIntent ? rendered : world.redactForContent(message, rendered);
}

/** `GET /guilds/{id}/threads/active`: every active thread at once, so `has_more` is always false. */
function activeThreadsBody(world: DiscordWorld): { threads: Json[]; members: Json[]; has_more: boolean } {
  const threads = world.activeThreads();
  return {
    threads: threads.map((t) => world.renderThread(t)),
    members: threads
      .filter((t) => t.memberIds.has(world.botId))
      .map((t) => ({ id: t.id, user_id: world.botId, join_timestamp: t.createdAt, flags: 0 })),
    has_more: false,
  };
}

/** GATEWAY_MESSAGE_CONTENT (1 << 19) and GATEWAY_GUILD_MEMBERS (1 << 15) as the developer portal would set them. */
export function applicationFlags(world: DiscordWorld): number {
  return (world.messageContentIntent ? 1 << 19 : 0) | (1 << 15);
}

/** The bot's own application as `GET /applications/@me` shows it to its bot token. */
function renderApplication(world: DiscordWorld): Json {
  const bot = world.user(world.botId);
  const owner = world.user(world.ownerId);
  return {
    id: world.applicationId,
    name: bot.username,
    icon: null,
    description: '',
    type: null,
    bot: world.renderUser(bot),
    summary: '',
    rpc_origins: [],
    bot_public: false,
    bot_require_code_grant: false,
    // A stand-in key: 64 hex characters, as the developer portal shows an Ed25519 public key.
    verify_key: createHash('sha256').update(`verify:${world.applicationId}`).digest('hex'),
    flags: applicationFlags(world),
    flags_new: String(applicationFlags(world)),
    redirect_uris: [],
    interactions_endpoint_url: null,
    role_connections_verification_url: null,
    owner: world.renderUser(owner),
    approximate_guild_count: 1,
    approximate_user_install_count: 0,
    approximate_user_authorization_count: 0,
    explicit_content_filter: 0,
    team: null,
    eligible_oauth2_scopes: ['bot', 'applications.commands'],
    integration_types_config: {
      '0': { oauth2_install_params: { scopes: ['bot', 'applications.commands'], permissions: '0' } },
    },
    hook: true,
    is_monetized: false,
    storefront_available: false,
    is_verified: false,
    is_discoverable: false,
  };
}
