export * from './case.state';
