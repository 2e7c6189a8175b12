import {
  BindRequest,
  ClaimRequest,
  GrantReply,
  LeaseCheck,
  ReleaseRequest,
  RenewRequest,
  standingOf,
} from '@caseloop/lease-model';
import { Inject, Injectable } from '@nestjs/common';
import { Asker, decideLease, LeaseCommand } from './lease.decider';
import { LeaseUnavailable, MAX_ATTEMPTS } from './lease.errors';
import { LeaseMetrics } from './lease.metrics';
import { LeaseRecorder } from './lease.recorder';
import { LeaseRequests } from './lease-requests';
import { Clock, LEASE_CLOCK } from './lease.settings';
import { LeaseStore } from './lease.store';

type HolderRequest = RenewRequest | ReleaseRequest | BindRequest | ClaimRequest;

/**
 * What a holder does with its grant: claim it, renew it, bind a capture to it, release it. Each is
 * decided on the lease entry, written by compare-and-set and recorded; a grant that ends here also
 * ends its request entry.
 */
@Injectable()
export class LeaseHolders {
  constructor(
    private readonly store: LeaseStore,
    private readonly recorder: LeaseRecorder,
    private readonly metrics: LeaseMetrics,
    private readonly requests: LeaseRequests,
    @Inject(LEASE_CLOCK) private readonly clock: Clock,
  ) {}

  /** The requester heard of its grant and uses it: it is no longer released as unused. */
  claim(req: ClaimRequest): Promise<GrantReply> {
    return this.onGrant(req, (now) => ({
      type: 'Claim',
      resource: req.resource,
      asker: asker(req),
      token: req.token,
      requestId: req.requestId,
      now,
    }));
  }

  renew(req: RenewRequest): Promise<GrantReply> {
    return this.onGrant(req, (now) => ({
      type: 'Renew',
      resource: req.resource,
      asker: asker(req),
      token: req.token,
      now,
      ...(req.ttlMs ? { ttlMs: req.ttlMs } : {}),
    }));
  }

  release(req: ReleaseRequest): Promise<GrantReply> {
    return this.onGrant(req, (now) => ({
      type: 'Release',
      resource: req.resource,
      asker: asker(req),
      token: req.token,
      captureIds: req.captureIds,
      now,
    }));
  }

  bind(req: BindRequest): Promise<GrantReply> {
    return this.onGrant(req, (now) => ({
      type: 'BindCapture',
      resource: req.resource,
      asker: asker(req),
      token: req.token,
      captureId: req.captureId,
      now,
    }));
  }

  private async onGrant(req: HolderRequest, command: (now: number) => LeaseCommand): Promise<GrantReply> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const slot = await this.store.readSlot(req.resource);
      const now = this.clock();
      const d = decideLease(command(now), slot);
      switch (d.kind) {
        case 'write': {
          const revision = await this.store.writeSlot(req.resource, d.record, d.expectedRevision);
          if (revision === null) continue;
          const token = d.record.token ?? revision;
          await this.recorder.record(d.facts(token), now);
          if (d.record.status === 'released') this.metrics.releases.inc();
          if (d.record.status === 'expired') this.metrics.expiries.inc();
          if (d.record.status !== 'held')
            await this.requests.end(d.record.holder.requestId, req.resource, token, d.record.status);
          return granted(standingOf({ revision, record: d.record }, req.token, now));
        }
        case 'refuse':
          this.metrics.refusals.inc({ reason: d.reason });
          await this.recorder.record(d.facts, now);
          return granted(standingOf(slot, req.token, now));
        case 'wait':
        case 'unchanged':
        case 'served':
          return granted(standingOf(slot, req.token, now));
      }
    }
    throw new LeaseUnavailable(`${req.resource}: the entry kept changing`);
  }
}

const asker = (r: HolderRequest): Asker => ({
  caseId: r.caseId,
  taskId: r.taskId,
  revision: r.revision,
  correlationId: r.correlationId,
});

const granted = (c: LeaseCheck): GrantReply => ({ ok: true, ...c });
