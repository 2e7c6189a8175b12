import { caseViewProjection } from './case-view/case-view.projection';
import { ProjectionError } from './projection.errors';
import { Projection } from './projection';

/** Every projection caseloop knows: adding one is its `<name>.projection.ts` plus a line here. */
export const PROJECTIONS: readonly Projection[] = [caseViewProjection];

export function projectionNamed(name: string): Projection {
  const p = PROJECTIONS.find((x) => x.name === name);
  if (!p)
    throw new ProjectionError(
      'unknown_projection',
      `no projection named ${name} (known: ${PROJECTIONS.map((x) => x.name).join(', ')})`,
    );
  return p;
}
