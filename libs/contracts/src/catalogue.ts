import { z } from 'zod';
import { EventDefinition } from './define-event';
import { coordinatorEvents } from './events/coordinator.events';
import { evidenceEvents } from './events/evidence.events';
import { intakeEvents } from './events/intake.events';
import { leaseEvents } from './events/lease.events';
import { monitorEvents } from './events/monitor.events';
import { workerEvents } from './events/worker.events';
import { Aggregate, Producer } from './producers';

/** The whole case event catalogue: one name per fact, each owned by exactly one producer. */
export const CATALOGUE = [
  ...intakeEvents,
  ...coordinatorEvents,
  ...workerEvents,
  ...leaseEvents,
  ...evidenceEvents,
  ...monitorEvents,
] as const;

type Defs = (typeof CATALOGUE)[number];
export type EventType = Defs['type'];
type DefOf<T extends EventType> = Extract<Defs, { type: T }>;
export type EventData<T extends EventType> = z.infer<DefOf<T>['schema']>;

const byType = new Map<string, EventDefinition>();
for (const def of CATALOGUE) {
  if (byType.has(def.type)) throw new Error(`event type ${def.type} is defined twice`);
  byType.set(def.type, def as EventDefinition);
}

export const eventDefinition = (type: string): EventDefinition | undefined => byType.get(type);
export const isEventType = (type: string): type is EventType => byType.has(type);
export const eventTypesOf = (producer: Producer, aggregate?: Aggregate): EventType[] =>
  CATALOGUE.filter((d) => d.producer === producer && (!aggregate || d.aggregate === aggregate)).map(
    (d) => d.type,
  );

/** What a decider returns: a type and its data. The store adds the envelope. */
export type EventDraft<T extends EventType = EventType> = T extends EventType
  ? { type: T; data: EventData<T> }
  : never;

/** What a producer may write: fields with a schema default (added in a later version) may be left out. */
export type EventInput<T extends EventType> = z.input<DefOf<T>['schema']>;

/** The store parses every draft with its schema before it is written, so the defaults are filled there. */
export const draft = <T extends EventType>(type: T, data: EventInput<T>): EventDraft<T> =>
  ({ type, data }) as EventDraft<T>;
