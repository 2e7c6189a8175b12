import { Ledger } from '@caseloop/ledger';
import {
  acquireRequest,
  bindRequest,
  claimRequest,
  decodeRpc,
  encodeRpc,
  leaseRpcWildcard,
  releaseRequest,
  renewRequest,
} from '@caseloop/lease-model';
import { PINO_LOGGER } from '@caseloop/platform';
import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Msg, Subscription } from 'nats';
import { Logger } from 'pino';
import { ZodError } from 'zod';
import { LeaseManager } from './lease.manager';
import { LEASE_SETTINGS, LeaseSettings } from './lease.settings';

/** Replicas share the requests: NATS hands each to one member of the group. */
const QUEUE_GROUP = 'caseloop-lease';

/**
 * The lease service's request/reply endpoint (`<ns>.lease-rpc.<operation>`): translates messages to
 * manager calls and errors to reply codes, nothing else. Validation errors name fields, never values.
 */
@Injectable()
export class LeaseRpcServer implements OnApplicationBootstrap, OnModuleDestroy {
  private sub: Subscription | null = null;

  constructor(
    @Inject(Ledger) private readonly ledger: Ledger,
    private readonly manager: LeaseManager,
    @Inject(LEASE_SETTINGS) private readonly settings: LeaseSettings,
    @Inject(PINO_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.sub = this.ledger.nc.subscribe(leaseRpcWildcard(this.settings.namespace), {
      queue: QUEUE_GROUP,
      callback: (err, msg) => {
        if (!err) void this.handle(msg);
      },
    });
  }

  /** Stops taking requests before the manager answers the waiting ones and the connection drains. */
  onModuleDestroy(): void {
    this.sub?.unsubscribe();
    this.sub = null;
  }

  private async handle(msg: Msg): Promise<void> {
    const op = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
    let reply: unknown;
    try {
      switch (op) {
        case 'acquire':
          reply = await this.manager.acquire(decodeRpc(acquireRequest, msg.data));
          break;
        case 'claim':
          reply = await this.manager.claim(decodeRpc(claimRequest, msg.data));
          break;
        case 'renew':
          reply = await this.manager.renew(decodeRpc(renewRequest, msg.data));
          break;
        case 'release':
          reply = await this.manager.release(decodeRpc(releaseRequest, msg.data));
          break;
        case 'bind':
          reply = await this.manager.bind(decodeRpc(bindRequest, msg.data));
          break;
        default:
          reply = {
            ok: false,
            code: 'invalid_request',
            message: `unknown lease operation ${JSON.stringify(op.slice(0, 40))}`,
          };
      }
    } catch (e) {
      if (e instanceof ZodError || e instanceof SyntaxError) {
        const fields =
          e instanceof ZodError
            ? e.issues.map((i) => i.path.join('.') || '(root)').join(', ')
            : 'body is not JSON';
        reply = { ok: false, code: 'invalid_request', message: `invalid ${op} request: ${fields}` };
      } else {
        this.logger.error({ op, err: (e as Error).message }, 'lease operation failed');
        reply = { ok: false, code: 'unavailable', message: `${op} failed: ${(e as Error).message}` };
      }
    }
    if (msg.reply) msg.respond(encodeRpc(reply));
  }
}
