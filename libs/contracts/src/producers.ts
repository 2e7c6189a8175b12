export const PRODUCERS = ['intake', 'coordinator', 'worker', 'lease', 'evidence', 'monitor'] as const;
export type Producer = (typeof PRODUCERS)[number];
/** Services that read the ledger and its projections but own no event: they may append nothing. */
export const READERS = ['console'] as const;
export type Reader = (typeof READERS)[number];
/** Every service: the producers and the readers. */
export type ServiceId = Producer | Reader;

export const isProducer = (v: unknown): v is Producer => (PRODUCERS as readonly unknown[]).includes(v);

/**
 * The ledger holds three kinds of aggregate, each its own subject family:
 * - `case`: everything about one engineering case (its events from all six producers);
 * - `source`: one inbound Discord message, recorded exactly once, forever;
 * - `ops`: facts that belong to no single case (clock ticks, improvement candidates).
 */
export const AGGREGATES = ['case', 'source', 'ops'] as const;
export type Aggregate = (typeof AGGREGATES)[number];
export const isAggregate = (v: unknown): v is Aggregate => (AGGREGATES as readonly unknown[]).includes(v);
