import { ContractError } from './errors';
import { assertSafeId, isSafeId } from './ids';
import { Aggregate, isAggregate, isProducer, Producer } from './producers';

/**
 * Subject layout: `<namespace>.<aggregate>.<id>.<producer>`, e.g. `caseloop.case.C01J….worker`.
 *
 * - each producer is the single writer of its own subjects, so NATS permissions can say
 *   "the worker may publish `caseloop.*.*.worker` only", and optimistic concurrency per
 *   (aggregate, producer) works on nats-server 2.9;
 * - one filter, `caseloop.case.<id>.*`, replays a whole case;
 * - the namespace lets tests and several installations share one NATS account without overlap.
 */
export const DEFAULT_NAMESPACE = 'caseloop';

export interface SubjectParts {
  namespace: string;
  aggregate: Aggregate;
  id: string;
  producer: Producer;
}

export function subjectFor(namespace: string, aggregate: Aggregate, id: string, producer: Producer): string {
  assertSafeId('namespace', namespace);
  assertSafeId(`${aggregate} id`, id);
  return `${namespace}.${aggregate}.${id}.${producer}`;
}

export const aggregateFilter = (namespace: string, aggregate: Aggregate, id: string): string =>
  `${assertSafeId('namespace', namespace)}.${aggregate}.${assertSafeId(`${aggregate} id`, id)}.*`;

/** Every subject the ledger stream holds for a namespace. */
export const streamSubjects = (namespace: string): string[] =>
  (['case', 'source', 'ops'] as const).map((a) => `${assertSafeId('namespace', namespace)}.${a}.*.*`);

/** What a producer may publish: `<ns>.*.*.<producer>`. */
export const producerPublishSubject = (namespace: string, producer: Producer): string =>
  `${assertSafeId('namespace', namespace)}.*.*.${producer}`;

export function parseSubject(subject: string): SubjectParts {
  const parts = subject.split('.');
  const [namespace, aggregate, id, producer] = parts;
  if (
    parts.length !== 4 ||
    !isSafeId(namespace) ||
    !isAggregate(aggregate) ||
    !isSafeId(id) ||
    !isProducer(producer)
  ) {
    throw new ContractError(
      'subject_mismatch',
      `not a ledger subject: ${JSON.stringify(subject.slice(0, 200))}`,
    );
  }
  return { namespace, aggregate, id, producer };
}
