import { z } from 'zod';
import { Aggregate, Producer } from './producers';

/** Turns data of version N into data of version N+1. Pure; never touches the stream. */
export type Upcaster = (data: unknown) => unknown;

export interface EventDefinition<T extends string = string, S extends z.ZodType = z.ZodType> {
  readonly type: T;
  /** The current schema version. Older versions are upcast on read; newer ones are refused. */
  readonly version: number;
  readonly producer: Producer;
  readonly aggregate: Aggregate;
  readonly schema: S;
  readonly description: string;
  /** `upcasters[n]` turns version n into n+1, for every n from 1 to version-1. */
  readonly upcasters: Readonly<Record<number, Upcaster>>;
}

export function defineEvent<const T extends string, S extends z.ZodType>(def: {
  type: T;
  version?: number;
  producer: Producer;
  aggregate: Aggregate;
  schema: S;
  description: string;
  upcasters?: Record<number, Upcaster>;
}): EventDefinition<T, S> {
  const version = def.version ?? 1;
  const upcasters = def.upcasters ?? {};
  for (let v = 1; v < version; v++) {
    if (!upcasters[v]) throw new Error(`${def.type} v${version} has no upcaster from v${v}`);
  }
  return Object.freeze({ ...def, version, upcasters: Object.freeze({ ...upcasters }) });
}

export type DataOf<D> = D extends EventDefinition<string, infer S> ? z.infer<S> : never;
