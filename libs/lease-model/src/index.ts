/**
 * The lease bucket's records and the lease request/reply contract: pure (zod and the contracts only),
 * shared by the lease service's decider and the client.
 */
export * from './lease.record';
export * from './lease.rpc';
