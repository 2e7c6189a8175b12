import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import { applicationFlags } from './rest';
import { Intents, PRIVILEGED_INTENTS, type Json, type WorldEvent } from './world';
import type { Worlds } from './worlds';

export const GatewayOp = {
  Dispatch: 0,
  Heartbeat: 1,
  Identify: 2,
  PresenceUpdate: 3,
  VoiceStateUpdate: 4,
  Resume: 6,
  Reconnect: 7,
  RequestGuildMembers: 8,
  InvalidSession: 9,
  Hello: 10,
  HeartbeatAck: 11,
} as const;

export const GatewayClose = {
  UnknownError: 4000,
  UnknownOpcode: 4001,
  DecodeError: 4002,
  NotAuthenticated: 4003,
  AuthenticationFailed: 4004,
  AlreadyAuthenticated: 4005,
  InvalidSeq: 4007,
  RateLimited: 4008,
  SessionTimedOut: 4009,
  InvalidShard: 4010,
  ShardingRequired: 4011,
  InvalidApiVersion: 4012,
  InvalidIntents: 4013,
  DisallowedIntents: 4014,
} as const;

// Close codes after which Discord keeps the session resumable.
const RESUMABLE_CLOSE_CODES = new Set<number>([4000, 4001, 4002, 4003, 4005, 4008]);
const KNOWN_INTENT_BITS = (1 << 26) - 1;
const REPLAY_BUFFER = 20_000;

export interface GatewayOpRecord {
  at: number;
  direction: 'in' | 'out' | 'close';
  op: number | null;
  t: string | null;
  s: number | null;
  sessionId: string | null;
  /** For closes: the code; who closed is `direction: 'close'` with `by`. */
  code?: number;
  by?: 'client' | 'server';
}

interface SessionState {
  id: string;
  intents: number;
  seq: number;
  buffer: { s: number; t: string; d: Json }[];
  connection: Connection | null;
  detachedAt: number | null;
}

interface Connection {
  socket: WebSocket;
  session: SessionState | null;
  closedByServer: boolean;
  /** Heartbeats on this socket go unanswered (a zombie connection, from the client's side). */
  silent: boolean;
}

export interface GatewayOptions {
  worlds: Worlds;
  token: string;
  heartbeatIntervalMs: number;
  /** Privileged intents enabled for the application in the developer portal. */
  privileged: { messageContent: boolean; guildMembers: boolean; presences: boolean };
  resumeWindowMs: number;
  resumeUrl: () => string;
  log: (record: GatewayOpRecord) => void;
  now: () => number;
  onSessionStart: () => void;
}

/** Gateway v10, JSON encoding: handshake, heartbeats, sequenced dispatch with replay on RESUME. */
export class Gateway {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly connections = new Set<Connection>();
  private readonly sessions = new Map<string, SessionState>();
  private paused = false;
  private readonly unsubscribe: (() => void)[];

  constructor(private readonly options: GatewayOptions) {
    this.unsubscribe = options.worlds.all.map((world) => world.subscribe((event) => this.dispatch(event)));
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://local');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, url.searchParams));
  }

  /** Dispatches stop (events are dropped, as if the gateway lost them) until resumeDispatch(). */
  pauseDispatch(): void {
    this.paused = true;
  }

  resumeDispatch(): void {
    this.paused = false;
  }

  /** Sessions that completed IDENTIFY and are live on a socket. */
  get connectedSessions(): number {
    return [...this.sessions.values()].filter((s) => s.connection).length;
  }

  /** Closes every socket abnormally (no close frame): the client sees 1006 and resumes. */
  drop(): void {
    for (const connection of this.connections) {
      connection.closedByServer = true;
      connection.socket.terminate();
    }
  }

  /** Stops acknowledging heartbeats on the sockets open now; the client should notice and resume on a new one. */
  withholdHeartbeatAcks(): void {
    for (const connection of this.connections) connection.silent = true;
  }

  /** Sends op 1: the client must heartbeat immediately. */
  requestHeartbeat(): void {
    for (const connection of this.connections)
      this.send(connection, { op: GatewayOp.Heartbeat, d: connection.session?.seq ?? null });
  }

  requestReconnect(): void {
    for (const connection of this.connections) this.send(connection, { op: GatewayOp.Reconnect, d: null });
  }

  invalidateSession(resumable: boolean): void {
    for (const connection of this.connections) {
      if (!connection.session) continue;
      if (!resumable) {
        this.sessions.delete(connection.session.id);
        connection.session.connection = null;
        connection.session = null;
      }
      this.send(connection, { op: GatewayOp.InvalidSession, d: resumable });
    }
  }

  close(code: number, reason = ''): void {
    for (const connection of this.connections) this.closeConnection(connection, code, reason);
  }

  async shutdown(): Promise<void> {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    for (const connection of this.connections) {
      connection.closedByServer = true;
      connection.socket.terminate();
    }
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private accept(socket: WebSocket, params: URLSearchParams): void {
    const connection: Connection = { socket, session: null, closedByServer: false, silent: false };
    this.connections.add(connection);
    socket.on('message', (data, isBinary) => this.onMessage(connection, data, isBinary));
    socket.on('close', (code) => this.onClose(connection, code));
    socket.on('error', () => socket.terminate());

    const version = params.get('v');
    const encoding = params.get('encoding') ?? 'json';
    if (version !== null && version !== '10') {
      this.closeConnection(connection, GatewayClose.InvalidApiVersion, 'Invalid API version');
      return;
    }
    if (encoding !== 'json') {
      this.closeConnection(connection, GatewayClose.DecodeError, 'Only JSON encoding is supported');
      return;
    }
    this.send(connection, {
      op: GatewayOp.Hello,
      d: {
        heartbeat_interval: this.options.heartbeatIntervalMs,
        _trace: ['["caseloop-local-discord",{"micros":0}]'],
      },
    });
  }

  private onMessage(connection: Connection, data: RawData, isBinary: boolean): void {
    let payload: { op?: unknown; d?: unknown };
    try {
      if (isBinary) throw new Error('binary frames are not JSON');
      payload = JSON.parse(data.toString()) as { op?: unknown; d?: unknown };
    } catch {
      this.closeConnection(connection, GatewayClose.DecodeError, 'Error while decoding payload.');
      return;
    }
    const op = typeof payload.op === 'number' ? payload.op : -1;
    this.options.log({
      at: this.options.now(),
      direction: 'in',
      op,
      t: null,
      s: null,
      sessionId: connection.session?.id ?? null,
    });
    const d = (typeof payload.d === 'object' && payload.d !== null ? payload.d : {}) as Json;

    switch (op) {
      case GatewayOp.Heartbeat:
        if (!connection.silent) this.send(connection, { op: GatewayOp.HeartbeatAck });
        return;
      case GatewayOp.Identify:
        this.identify(connection, d);
        return;
      case GatewayOp.Resume:
        this.resume(connection, d);
        return;
      case GatewayOp.PresenceUpdate:
      case GatewayOp.VoiceStateUpdate:
        if (!connection.session)
          this.closeConnection(connection, GatewayClose.NotAuthenticated, 'Not authenticated.');
        return;
      case GatewayOp.RequestGuildMembers:
        if (!connection.session) {
          this.closeConnection(connection, GatewayClose.NotAuthenticated, 'Not authenticated.');
          return;
        }
        this.requestGuildMembers(connection.session, d);
        return;
      default:
        this.closeConnection(connection, GatewayClose.UnknownOpcode, 'Unknown opcode.');
    }
  }

  private identify(connection: Connection, d: Json): void {
    const { options } = this;
    if (connection.session) {
      this.closeConnection(connection, GatewayClose.AlreadyAuthenticated, 'Already authenticated.');
      return;
    }
    if (d.token !== options.token && d.token !== `Bot ${options.token}`) {
      this.closeConnection(connection, GatewayClose.AuthenticationFailed, 'Authentication failed.');
      return;
    }
    const shard = d.shard;
    if (shard !== undefined && !(Array.isArray(shard) && shard[0] === 0 && shard[1] === 1)) {
      this.closeConnection(connection, GatewayClose.InvalidShard, 'Invalid shard.');
      return;
    }
    const intents = d.intents;
    if (
      typeof intents !== 'number' ||
      !Number.isInteger(intents) ||
      intents < 0 ||
      (intents & ~KNOWN_INTENT_BITS) !== 0
    ) {
      this.closeConnection(connection, GatewayClose.InvalidIntents, 'Invalid intent(s).');
      return;
    }
    const enabled =
      (options.privileged.messageContent ? Intents.MessageContent : 0) |
      (options.privileged.guildMembers ? Intents.GuildMembers : 0) |
      (options.privileged.presences ? Intents.GuildPresences : 0);
    if ((intents & PRIVILEGED_INTENTS & ~enabled) !== 0) {
      this.closeConnection(connection, GatewayClose.DisallowedIntents, 'Disallowed intent(s).');
      return;
    }
    options.onSessionStart();
    const session: SessionState = {
      id: randomBytes(16).toString('hex'),
      intents,
      seq: 0,
      buffer: [],
      connection,
      detachedAt: null,
    };
    this.sessions.set(session.id, session);
    connection.session = session;
    const world = options.worlds.primary;
    this.sequence(session, 'READY', {
      v: 10,
      user: { ...world.renderUser(world.user(world.botId)), verified: true, mfa_enabled: false, email: null },
      guilds: options.worlds.all.map((w) => ({ id: w.guildId, unavailable: true })),
      session_id: session.id,
      resume_gateway_url: options.resumeUrl(),
      session_type: 'normal',
      shard: [0, 1],
      application: { id: world.applicationId, flags: applicationFlags(world) },
      private_channels: [],
      relationships: [],
      presences: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: [],
      user_settings: {},
      auth: {},
      _trace: ['["caseloop-local-discord",{"micros":0}]'],
    });
    for (const w of options.worlds.all) this.sequence(session, 'GUILD_CREATE', w.renderGuildCreate());
  }

  /**
   * Op 8: answered with GUILD_MEMBERS_CHUNK dispatches (1000 members each), by `query` (username
   * prefix, '' = all, needs `limit`) or `user_ids`; `not_found` lists ids that are not members.
   * Without the GUILD_MEMBERS intent a full list is refused as Discord does (close 4013 is for the
   * IDENTIFY; here Discord just sends nothing, so nothing is sent).
   */
  private requestGuildMembers(session: SessionState, d: Json): void {
    const world = this.options.worlds.all.find((w) => w.guildId === String(d.guild_id));
    if (!world) return;
    const nonce = typeof d.nonce === 'string' ? d.nonce.slice(0, 32) : undefined;
    const members = [...world.users.values()];
    let found: typeof members;
    let notFound: string[] = [];
    if (Array.isArray(d.user_ids) || typeof d.user_ids === 'string') {
      const ids = (Array.isArray(d.user_ids) ? d.user_ids : [d.user_ids]).map(String).slice(0, 100);
      found = members.filter((u) => ids.includes(u.id));
      notFound = ids.filter((id) => !world.users.has(id));
    } else {
      const query = typeof d.query === 'string' ? d.query.toLowerCase() : '';
      const limit = typeof d.limit === 'number' && d.limit > 0 ? d.limit : Infinity;
      if (query === '' && (session.intents & Intents.GuildMembers) === 0) return;
      found = members.filter((u) => u.username.toLowerCase().startsWith(query)).slice(0, limit);
    }
    const chunks = Math.max(1, Math.ceil(found.length / 1000));
    for (let i = 0; i < chunks; i++) {
      this.sequence(session, 'GUILD_MEMBERS_CHUNK', {
        guild_id: world.guildId,
        members: found.slice(i * 1000, (i + 1) * 1000).map((u) => world.renderMember(u, true)),
        chunk_index: i,
        chunk_count: chunks,
        ...(i === 0 && notFound.length > 0 ? { not_found: notFound } : {}),
        ...(d.presences === true ? { presences: [] } : {}),
        ...(nonce !== undefined ? { nonce } : {}),
      });
    }
  }

  private resume(connection: Connection, d: Json): void {
    const { options } = this;
    if (d.token !== options.token && d.token !== `Bot ${options.token}`) {
      this.closeConnection(connection, GatewayClose.AuthenticationFailed, 'Authentication failed.');
      return;
    }
    const session = typeof d.session_id === 'string' ? this.sessions.get(d.session_id) : undefined;
    const seq = typeof d.seq === 'number' ? d.seq : null;
    const expired =
      session !== undefined &&
      session.detachedAt !== null &&
      options.now() - session.detachedAt > options.resumeWindowMs;
    // The replay must start right after `seq`: older events than the buffer holds cannot be replayed.
    const oldest = session?.buffer[0]?.s ?? 1;
    if (!session || expired || seq === null || seq > session.seq || seq < oldest - 1) {
      if (session) this.sessions.delete(session.id);
      this.send(connection, { op: GatewayOp.InvalidSession, d: false });
      return;
    }
    if (session.connection && session.connection !== connection) {
      const previous = session.connection;
      previous.session = null;
      previous.closedByServer = true;
      previous.socket.terminate();
    }
    session.connection = connection;
    session.detachedAt = null;
    connection.session = session;
    for (const entry of session.buffer) {
      if (entry.s > seq)
        this.send(connection, { op: GatewayOp.Dispatch, t: entry.t, s: entry.s, d: entry.d });
    }
    this.sequence(session, 'RESUMED', { _trace: ['["caseloop-local-discord",{"micros":0}]'] });
  }

  private dispatch(event: WorldEvent): void {
    if (this.paused) return;
    const now = this.options.now();
    for (const session of this.sessions.values()) {
      if (session.detachedAt !== null && now - session.detachedAt > this.options.resumeWindowMs) {
        this.sessions.delete(session.id);
        continue;
      }
      if (event.intent !== null && (session.intents & event.intent) === 0) continue;
      let d = event.d;
      if (event.message && (session.intents & Intents.MessageContent) === 0)
        d = this.options.worlds.primary.redactForContent(event.message, d);
      this.sequence(session, event.t, d);
    }
  }

  private sequence(session: SessionState, t: string, d: Json): void {
    session.seq += 1;
    const entry = { s: session.seq, t, d };
    session.buffer.push(entry);
    if (session.buffer.length > REPLAY_BUFFER)
      session.buffer.splice(0, session.buffer.length - REPLAY_BUFFER);
    if (session.connection) this.send(session.connection, { op: GatewayOp.Dispatch, t, s: entry.s, d });
  }

  private send(connection: Connection, payload: { op: number; d?: unknown; t?: string; s?: number }): void {
    if (connection.socket.readyState !== WebSocket.OPEN) return;
    const frame = { op: payload.op, d: payload.d ?? null, s: payload.s ?? null, t: payload.t ?? null };
    this.options.log({
      at: this.options.now(),
      direction: 'out',
      op: payload.op,
      t: frame.t,
      s: frame.s,
      sessionId: connection.session?.id ?? null,
    });
    connection.socket.send(JSON.stringify(frame));
  }

  private closeConnection(connection: Connection, code: number, reason: string): void {
    connection.closedByServer = true;
    if (connection.session && !RESUMABLE_CLOSE_CODES.has(code)) {
      this.sessions.delete(connection.session.id);
      connection.session.connection = null;
      connection.session = null;
    }
    if (
      connection.socket.readyState === WebSocket.OPEN ||
      connection.socket.readyState === WebSocket.CONNECTING
    ) {
      connection.socket.close(code, reason);
    }
  }

  private onClose(connection: Connection, code: number): void {
    this.connections.delete(connection);
    this.options.log({
      at: this.options.now(),
      direction: 'close',
      op: null,
      t: null,
      s: null,
      sessionId: connection.session?.id ?? null,
      code,
      by: connection.closedByServer ? 'server' : 'client',
    });
    const session = connection.session;
    if (!session || session.connection !== connection) return;
    session.connection = null;
    // A client that closes with 1000/1001 ends its session; anything else may resume.
    if (!connection.closedByServer && (code === 1000 || code === 1001)) this.sessions.delete(session.id);
    else session.detachedAt = this.options.now();
  }
}
