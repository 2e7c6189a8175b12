export * from './judgement.route';
export * from './judgement.port';
export * from './model.adapters';
export * from './judged.decision';
export * from './readiness.port';
