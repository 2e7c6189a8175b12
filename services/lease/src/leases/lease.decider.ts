import { draft, EventDraft } from '@caseloop/contracts';
import {
  HeldLeaseRecord,
  LeaseHolder,
  LeaseRecord,
  LeaseSlot,
  LeaseWaiter,
  tokenOf,
} from '@caseloop/lease-model';

/**
 * The lease rules, pure: given the resource's entry as read from KV and a command (with the time it
 * is decided at), what to write (by compare-and-set against the entry's revision) and which facts
 * to record. The service applies the write; a failed compare-and-set means the entry moved, so it
 * re-reads and decides again — a grant that changed hands is then refused by these same rules.
 */

/** Who is asking: refusals are recorded on the asker's case. */
export interface Asker {
  caseId: string;
  taskId: string;
  revision: string;
  correlationId: string;
}

export type LeaseCommand =
  | {
      type: 'Grant';
      resource: string;
      waiter: LeaseWaiter;
      now: number;
      skewMs: number;
      /** How long the requester has to claim the grant before it is released as unused. */
      claimMs: number;
    }
  | { type: 'Claim'; resource: string; asker: Asker; token: number; requestId: string; now: number }
  | { type: 'Renew'; resource: string; asker: Asker; token: number; ttlMs?: number; now: number }
  | {
      type: 'Release';
      resource: string;
      asker: Asker;
      token: number;
      captureIds: readonly string[];
      now: number;
    }
  | { type: 'BindCapture'; resource: string; asker: Asker; token: number; captureId: string; now: number }
  | { type: 'Expire'; resource: string; now: number; skewMs: number }
  /** A grant its requester never claimed (it stopped listening, or never heard): give it back. */
  | { type: 'ReleaseUnclaimed'; resource: string; now: number };

/** One event for one case. `key` is unique per fact within the bucket; the service derives the command id from it. */
export interface LeaseFact {
  caseId: string;
  correlationId: string;
  key: string;
  event: EventDraft;
}

export type RefusalReason = 'expired' | 'not_holder';

export type LeaseDecision =
  /** Write `record` expecting `expectedRevision` (0: the key must not exist); then record `facts(token)`. */
  | { kind: 'write'; expectedRevision: number; record: LeaseRecord; facts: (token: number) => LeaseFact[] }
  | { kind: 'refuse'; reason: RefusalReason; facts: LeaseFact[] }
  /** The resource is busy: the waiter stays in line. */
  | { kind: 'wait' }
  /** Already so (a retried call): nothing to write or record. */
  | { kind: 'unchanged' }
  /** The waiter was granted before (its grant is the entry's current or last one): drop it from the line. */
  | { kind: 'served' };

const iso = (ms: number): string => new Date(ms).toISOString();

const holderOf = (w: LeaseWaiter): LeaseHolder => ({
  requestId: w.requestId,
  caseId: w.caseId,
  taskId: w.taskId,
  revision: w.revision,
  correlationId: w.correlationId,
  position: w.position,
});

/**
 * The request's own fact. Whoever records what became of a request (grant or refusal) records this
 * first — the same fact under the same key, so the ledger keeps one copy — and the case always reads
 * requested-then-granted, whichever replica or path got there first.
 */
export function requestedFact(resource: string, w: LeaseHolder): LeaseFact {
  return {
    caseId: w.caseId,
    correlationId: w.correlationId,
    key: `requested-${w.requestId}`,
    event: draft('LeaseRequested', {
      resource,
      taskId: w.taskId,
      revision: w.revision,
      requestId: w.requestId,
      position: w.position,
    }),
  };
}

/** A request that leaves the line ungranted: still waiting at its deadline, or withdrawn on shutdown. */
export function unservedFacts(
  resource: string,
  w: LeaseWaiter,
  reason: 'queue_timeout' | 'withdrawn',
): LeaseFact[] {
  return [
    requestedFact(resource, w),
    {
      caseId: w.caseId,
      correlationId: w.correlationId,
      key: `refused-${reason}-${w.requestId}`,
      event: draft('LeaseRefused', {
        resource,
        taskId: w.taskId,
        revision: w.revision,
        reason,
        token: null,
        operation: 'acquire',
        requestId: w.requestId,
      }),
    },
  ];
}

function refuse(
  c: Extract<LeaseCommand, { asker: Asker }>,
  reason: RefusalReason,
  operation: 'acquire' | 'renew' | 'release' | 'bind_capture',
  commandKey: string,
): LeaseDecision {
  return {
    kind: 'refuse',
    reason,
    facts: [
      {
        caseId: c.asker.caseId,
        correlationId: c.asker.correlationId,
        key: `refused-${commandKey}`,
        event: draft('LeaseRefused', {
          resource: c.resource,
          taskId: c.asker.taskId,
          revision: c.asker.revision,
          reason,
          token: c.token,
          operation,
        }),
      },
    ],
  };
}

function expiredFact(
  resource: string,
  token: number,
  held: { holder: LeaseHolder; expiresAt: number; captureIds: string[] },
  takenOverBy: string | null,
): LeaseFact {
  return {
    caseId: held.holder.caseId,
    correlationId: held.holder.correlationId,
    key: `${token}-expired`,
    event: draft('LeaseExpired', {
      resource,
      taskId: held.holder.taskId,
      revision: held.holder.revision,
      token,
      expiredAt: iso(held.expiresAt),
      captureIds: held.captureIds,
      takenOverBy,
    }),
  };
}

function releasedFact(
  resource: string,
  token: number,
  held: { holder: LeaseHolder; captureIds: string[] },
  unclaimed: boolean,
): LeaseFact {
  return {
    caseId: held.holder.caseId,
    correlationId: held.holder.correlationId,
    key: `${token}-released`,
    event: draft('LeaseReleased', {
      resource,
      taskId: held.holder.taskId,
      revision: held.holder.revision,
      token,
      captureIds: held.captureIds,
      ...(unclaimed ? { unclaimed: true } : {}),
    }),
  };
}

function grant(
  c: Extract<LeaseCommand, { type: 'Grant' }>,
  slot: LeaseSlot | null,
  takeover: boolean,
): LeaseDecision {
  const w = c.waiter;
  const previous = slot && takeover && slot.record.status === 'held' ? slot.record : null;
  const previousToken = slot ? tokenOf(slot) : 0;
  const record: HeldLeaseRecord = {
    status: 'held',
    resource: c.resource,
    holder: holderOf(w),
    token: null,
    grantedAt: c.now,
    expiresAt: c.now + w.ttlMs,
    ttlMs: w.ttlMs,
    renewals: 0,
    captureIds: [],
    claimBy: c.now + c.claimMs,
    takeoverOf: previous
      ? {
          token: previousToken,
          holder: previous.holder,
          expiresAt: previous.expiresAt,
          captureIds: previous.captureIds,
        }
      : null,
  };
  return {
    kind: 'write',
    expectedRevision: slot?.revision ?? 0,
    record,
    facts: (token) => [
      requestedFact(c.resource, record.holder),
      ...(previous ? [expiredFact(c.resource, previousToken, previous, w.requestId)] : []),
      {
        caseId: w.caseId,
        correlationId: w.correlationId,
        key: `${token}-granted`,
        event: draft('LeaseGranted', {
          resource: c.resource,
          taskId: w.taskId,
          revision: w.revision,
          requestId: w.requestId,
          token,
          expiresAt: iso(record.expiresAt),
        }),
      },
    ],
  };
}

export function decideLease(c: LeaseCommand, slot: LeaseSlot | null): LeaseDecision {
  switch (c.type) {
    case 'Grant': {
      if (!slot) return grant(c, null, false);
      const r = slot.record;
      if (r.holder.requestId === c.waiter.requestId)
        return r.status === 'held' ? { kind: 'unchanged' } : { kind: 'served' };
      switch (r.status) {
        case 'held':
          // Only past the expiry plus the skew margin: the holder may run on a slower clock.
          return c.now > r.expiresAt + c.skewMs ? grant(c, slot, true) : { kind: 'wait' };
        case 'released':
        case 'expired':
          return grant(c, slot, false);
      }
    }
    case 'Claim': {
      if (!slot || tokenOf(slot) !== c.token || slot.record.holder.requestId !== c.requestId)
        return refuse(c, 'not_holder', 'acquire', `${c.token}-claim-${slot?.revision ?? 0}`);
      const r = slot.record;
      switch (r.status) {
        case 'released':
          return refuse(c, 'not_holder', 'acquire', `${c.token}-claim-released`);
        // a grant that lapsed before its claim arrived is not released as unused: it expires
        case 'expired':
          return { kind: 'unchanged' };
        case 'held':
          if (r.claimBy === undefined || r.claimBy === null) return { kind: 'unchanged' };
          if (c.now >= r.expiresAt) return { kind: 'unchanged' };
          return {
            kind: 'write',
            expectedRevision: slot.revision,
            record: { ...r, token: tokenOf(slot), claimBy: null },
            facts: () => [],
          };
      }
    }
    case 'ReleaseUnclaimed': {
      if (!slot || slot.record.status !== 'held') return { kind: 'unchanged' };
      const r = slot.record;
      if (r.claimBy === undefined || r.claimBy === null || c.now <= r.claimBy) return { kind: 'unchanged' };
      const token = tokenOf(slot);
      return {
        kind: 'write',
        expectedRevision: slot.revision,
        record: {
          status: 'released',
          resource: r.resource,
          holder: r.holder,
          grantedAt: r.grantedAt,
          expiresAt: r.expiresAt,
          captureIds: r.captureIds,
          token,
          releasedAt: c.now,
          unclaimed: true,
        },
        facts: () => [releasedFact(c.resource, token, r, true)],
      };
    }
    case 'Renew': {
      if (!slot || tokenOf(slot) !== c.token)
        return refuse(c, 'not_holder', 'renew', `${c.token}-renew-${slot?.revision ?? 0}`);
      const r = slot.record;
      switch (r.status) {
        case 'released':
          return refuse(c, 'not_holder', 'renew', `${c.token}-renew-released`);
        case 'expired':
          return refuse(c, 'expired', 'renew', `${c.token}-renew-expired`);
        case 'held': {
          if (c.now >= r.expiresAt) return refuse(c, 'expired', 'renew', `${c.token}-renew-lapsed`);
          const token = tokenOf(slot);
          const renewals = r.renewals + 1;
          const record: HeldLeaseRecord = { ...r, token, expiresAt: c.now + (c.ttlMs ?? r.ttlMs), renewals };
          return {
            kind: 'write',
            expectedRevision: slot.revision,
            record,
            facts: () => [
              {
                caseId: r.holder.caseId,
                correlationId: r.holder.correlationId,
                key: `${token}-renewed-${renewals}`,
                event: draft('LeaseRenewed', {
                  resource: c.resource,
                  taskId: r.holder.taskId,
                  revision: r.holder.revision,
                  token,
                  expiresAt: iso(record.expiresAt),
                  renewals,
                }),
              },
            ],
          };
        }
      }
    }
    case 'Release': {
      if (!slot || tokenOf(slot) !== c.token)
        return refuse(c, 'not_holder', 'release', `${c.token}-release-${slot?.revision ?? 0}`);
      const r = slot.record;
      switch (r.status) {
        case 'released':
          return { kind: 'unchanged' };
        case 'expired':
          return refuse(c, 'expired', 'release', `${c.token}-release-expired`);
        case 'held': {
          const token = tokenOf(slot);
          const captureIds = [...new Set([...r.captureIds, ...c.captureIds])];
          if (c.now >= r.expiresAt) {
            // Given back too late: the truth is that it lapsed, and captures after the expiry are void.
            return {
              kind: 'write',
              expectedRevision: slot.revision,
              record: {
                status: 'expired',
                resource: r.resource,
                holder: r.holder,
                grantedAt: r.grantedAt,
                expiresAt: r.expiresAt,
                captureIds,
                token,
                expiredAt: c.now,
              },
              facts: () => [expiredFact(c.resource, token, { ...r, captureIds }, null)],
            };
          }
          return {
            kind: 'write',
            expectedRevision: slot.revision,
            record: {
              status: 'released',
              resource: r.resource,
              holder: r.holder,
              grantedAt: r.grantedAt,
              expiresAt: r.expiresAt,
              captureIds,
              token,
              releasedAt: c.now,
            },
            facts: () => [releasedFact(c.resource, token, { ...r, captureIds }, false)],
          };
        }
      }
    }
    case 'BindCapture': {
      const key = `${c.token}-bind-${c.captureId}`;
      if (!slot || tokenOf(slot) !== c.token) return refuse(c, 'not_holder', 'bind_capture', key);
      const r = slot.record;
      switch (r.status) {
        case 'released':
          return refuse(c, 'not_holder', 'bind_capture', key);
        case 'expired':
          return refuse(c, 'expired', 'bind_capture', key);
        case 'held':
          if (c.now >= r.expiresAt) return refuse(c, 'expired', 'bind_capture', key);
          if (r.captureIds.includes(c.captureId)) return { kind: 'unchanged' };
          return {
            kind: 'write',
            expectedRevision: slot.revision,
            record: { ...r, token: tokenOf(slot), captureIds: [...r.captureIds, c.captureId] },
            facts: () => [],
          };
      }
    }
    case 'Expire': {
      if (!slot || slot.record.status !== 'held') return { kind: 'unchanged' };
      const r = slot.record;
      if (c.now <= r.expiresAt + c.skewMs) return { kind: 'unchanged' };
      const token = tokenOf(slot);
      return {
        kind: 'write',
        expectedRevision: slot.revision,
        record: {
          status: 'expired',
          resource: r.resource,
          holder: r.holder,
          grantedAt: r.grantedAt,
          expiresAt: r.expiresAt,
          captureIds: r.captureIds,
          token,
          expiredAt: c.now,
        },
        facts: () => [expiredFact(c.resource, token, r, null)],
      };
    }
  }
}

/**
 * The facts an entry stands for, rebuilt exactly from the entry alone (the grant, a takeover's
 * expiry, the release or the expiry). The service uses them to reconcile after a crash between a
 * compare-and-set and its append; their keys match the ones `decideLease` produced.
 */
export function impliedFacts(slot: LeaseSlot): LeaseFact[] {
  const r = slot.record;
  const token = tokenOf(slot);
  switch (r.status) {
    case 'held':
      return [
        requestedFact(r.resource, r.holder),
        ...(r.takeoverOf
          ? [expiredFact(r.resource, r.takeoverOf.token, r.takeoverOf, r.holder.requestId)]
          : []),
        {
          caseId: r.holder.caseId,
          correlationId: r.holder.correlationId,
          key: `${token}-granted`,
          event: draft('LeaseGranted', {
            resource: r.resource,
            taskId: r.holder.taskId,
            revision: r.holder.revision,
            requestId: r.holder.requestId,
            token,
            expiresAt: iso(r.grantedAt + r.ttlMs),
          }),
        },
      ];
    case 'released':
      return [releasedFact(r.resource, token, r, r.unclaimed === true)];
    case 'expired':
      return [expiredFact(r.resource, token, r, null)];
  }
}
