/**
 * What the console's pages show, as plain data (also their JSON variant). Pure: rows and events
 * in, view out; time comes in as `now`. One module per page (list, one case, waiting, ops
 * findings); this one gathers them for the service and the controller.
 */
export * from './case-list.view';
export * from './case-detail.types';
export * from './case-detail.view';
export * from './checks.view';
export * from './event-summary.view';
export * from './ops-findings.view';
export * from './waiting.view';
export { safeText } from './view-text';
