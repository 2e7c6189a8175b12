export * from './jetstream.context';
export * from './jetstream.server';
export * from './jetstream.client';
export * from './jetstream-exception.filter';
export * from './keyed-scheduler';
export * from './settle';
export * from './ledger.module';
export * from './delivery';
