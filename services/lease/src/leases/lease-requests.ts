import { AcquireReply, LeaseRequestRecord, LeaseSlot, LeaseWaiter, tokenOf } from '@caseloop/lease-model';
import { PINO_LOGGER } from '@caseloop/platform';
import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { impliedFacts } from './lease.decider';
import { LeaseUnavailable, MAX_ATTEMPTS } from './lease.errors';
import { LeaseRecorder } from './lease.recorder';
import { Clock, LEASE_CLOCK } from './lease.settings';
import { LeaseStore } from './lease.store';

/**
 * What became of each request, written to `request.<requestId>` where its client reads it:
 * granted, refused or ended. A grant is written only after its facts are recorded, so a case never
 * shows a release before the grant; after a crash the lease entry still says what was decided.
 */
@Injectable()
export class LeaseRequests {
  constructor(
    private readonly store: LeaseStore,
    private readonly recorder: LeaseRecorder,
    @Inject(LEASE_CLOCK) private readonly clock: Clock,
    @Inject(PINO_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * A held grant whose requester has not been told (the process that granted it died between the
   * compare-and-set and the request entry): record its facts (again: the same message ids, so the
   * ledger keeps one copy) and then write the grant where the requester reads it — so its case never
   * shows a release before the grant.
   */
  async deliver(slot: LeaseSlot): Promise<LeaseRequestRecord | null> {
    const r = slot.record;
    if (r.status !== 'held') return null;
    const token = tokenOf(slot);
    const entry = await this.store.readRequest(r.holder.requestId);
    if (entry && entry.record.status === 'granted' && entry.record.token === token) return entry.record;
    if (entry && entry.record.status !== 'queued') return entry.record;
    await this.recorder.record(impliedFacts(slot), this.clock());
    return this.markGranted(r.resource, r.holder, token, r.expiresAt);
  }

  async markGranted(
    resource: string,
    holder: { requestId: string; position: number },
    token: number,
    expiresAt: number,
  ): Promise<LeaseRequestRecord> {
    const record: LeaseRequestRecord = {
      status: 'granted',
      requestId: holder.requestId,
      resource,
      position: holder.position,
      token,
      expiresAt,
    };
    await this.put(record, (prev) => prev === null || prev.status === 'queued');
    return record;
  }

  async refuse(resource: string, w: LeaseWaiter, code: 'queue_timeout', message: string): Promise<void> {
    await this.put(
      { status: 'refused', requestId: w.requestId, resource, code, message },
      (prev) => prev === null || prev.status === 'queued',
    );
  }

  async end(
    requestId: string,
    resource: string,
    token: number,
    how: 'released' | 'unclaimed' | 'expired',
  ): Promise<void> {
    await this.put(
      { status: 'ended', requestId, resource, token, how },
      (prev) => prev === null || prev.status !== 'ended',
    );
  }

  /** After a crash between a compare-and-set and its append, the entry still says what happened. */
  async reconcile(resource: string): Promise<void> {
    try {
      const slot = await this.store.readSlot(resource);
      if (!slot) return;
      const appended = await this.recorder.ensure(impliedFacts(slot), this.clock());
      if (appended > 0)
        this.logger.warn({ resource, appended }, 'recorded lease facts missing from the ledger');
      if (slot.record.status === 'held') await this.deliver(slot);
      else
        await this.end(
          slot.record.holder.requestId,
          resource,
          tokenOf(slot),
          slot.record.status === 'released' && slot.record.unclaimed ? 'unclaimed' : slot.record.status,
        );
    } catch (e) {
      this.logger.error({ resource, err: (e as Error).message }, 'could not reconcile lease facts');
    }
  }

  /** Writes a request's entry by compare-and-set, unless what is there already says more. */
  private async put(
    record: LeaseRequestRecord,
    replaces: (prev: LeaseRequestRecord | null) => boolean,
  ): Promise<void> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const prev = await this.store.readRequest(record.requestId);
      if (!replaces(prev?.record ?? null)) return;
      if ((await this.store.writeRequest(record, prev?.revision ?? 0)) !== null) return;
    }
    throw new LeaseUnavailable(`request ${record.requestId}: the entry kept changing`);
  }
}

/** What a (retried) acquisition is answered, from its request entry. */
export function replyOf(r: LeaseRequestRecord): AcquireReply {
  switch (r.status) {
    case 'queued':
      return { ok: true, queued: true, position: r.position };
    case 'granted':
      return { ok: true, token: r.token, expiresAt: r.expiresAt, position: r.position };
    case 'refused':
      return { ok: false, code: r.code, message: r.message };
    case 'ended':
      return { ok: false, code: 'unavailable', message: `the grant of ${r.resource} is over (${r.how})` };
  }
}
