export * from './case.state';
export * from './ledger-stats';
