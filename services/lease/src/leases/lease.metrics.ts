import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What an operator watches on `/metrics`: grants, refusals by reason, expiries, releases and time in line. */
@Injectable()
export class LeaseMetrics {
  readonly grants: Counter;
  readonly refusals: Counter<'reason'>;
  readonly expiries: Counter;
  readonly releases: Counter;
  readonly unclaimed: Counter;
  readonly waitSeconds: Histogram;
  readonly waiting: Gauge;

  constructor(@Inject(Registry) registry: Registry) {
    const registers = [registry];
    this.grants = new Counter({ name: 'caseloop_lease_grants_total', help: 'Leases granted', registers });
    this.refusals = new Counter({
      name: 'caseloop_lease_refusals_total',
      help: 'Lease requests refused',
      labelNames: ['reason'],
      registers,
    });
    this.expiries = new Counter({
      name: 'caseloop_lease_expiries_total',
      help: 'Leases voided by expiry',
      registers,
    });
    this.releases = new Counter({
      name: 'caseloop_lease_releases_total',
      help: 'Leases given back',
      registers,
    });
    this.unclaimed = new Counter({
      name: 'caseloop_lease_unclaimed_total',
      help: 'Grants released because their requester never claimed them',
      registers,
    });
    this.waitSeconds = new Histogram({
      name: 'caseloop_lease_wait_seconds',
      help: 'Time from request to grant',
      buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2, 10, 60, 300],
      registers,
    });
    this.waiting = new Gauge({
      name: 'caseloop_lease_waiting',
      help: 'Requests waiting in the lines this instance looked at last',
      registers,
    });
  }
}
