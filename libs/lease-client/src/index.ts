export * from '@caseloop/lease-model';
export * from './lease.errors';
export { LeaseClient, Lease } from './lease.client';
export type { LeaseClientOptions, AcquireOptions } from './lease.client';
