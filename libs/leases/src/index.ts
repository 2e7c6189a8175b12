export * from './lease.record';
export * from './lease.rpc';
export * from './lease.errors';
export { LeaseClient, Lease } from './lease.client';
export type { LeaseClientOptions, AcquireOptions } from './lease.client';
