import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describeIssues, RepositoryConfigError } from '@caseloop/target-repositories';
import { RouteSpec, RoutesFile, routesFile } from './route.config';

/**
 * Reads the pinned routes file; errors name keys (`normal.runtime.model`), never values. Relative
 * paths in it (provider credential files, a scripted step's `copy` and `patch`) are taken from the
 * file's directory, as in the repositories file, never from wherever the worker was started.
 */
export function loadRoutesFile(file: string): RoutesFile {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new RepositoryConfigError(file, [
      (e as NodeJS.ErrnoException).code
        ? `cannot read: ${(e as NodeJS.ErrnoException).code}`
        : 'not valid YAML or JSON',
    ]);
  }
  const parsed = routesFile.safeParse(raw);
  if (!parsed.success) throw new RepositoryConfigError(file, describeIssues(parsed.error));
  const base = dirname(resolve(file));
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(base, p));
  const route = (r: RouteSpec): RouteSpec => ({
    ...r,
    providerCredentialFiles: Object.fromEntries(
      Object.entries(r.providerCredentialFiles).map(([k, f]) => [k, abs(f)]),
    ),
    runtime:
      r.runtime.kind === 'scripted'
        ? {
            ...r.runtime,
            steps: r.runtime.steps.map((s) => ({
              ...s,
              ...(s.copy ? { copy: abs(s.copy) } : {}),
              ...(s.patch ? { patch: abs(s.patch) } : {}),
            })),
          }
        : r.runtime,
  });
  return {
    ...parsed.data,
    normal: route(parsed.data.normal),
    escalation: parsed.data.escalation ? route(parsed.data.escalation) : null,
  };
}
