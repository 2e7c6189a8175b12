export * from './errors';
export * from './server-features';
export * from './provision';
export * from './dead-letters';
export * from './read-event';
export * from './event-store';
export * from './connect';
export * from './nest';
