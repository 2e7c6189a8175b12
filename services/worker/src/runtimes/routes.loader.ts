import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { describeIssues, RepositoryConfigError } from '@caseloop/target-repositories';
import { RoutesFile, routesFile } from './route.config';

/** Reads the pinned routes file; errors name keys (`normal.runtime.model`), never values. */
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
  return parsed.data;
}
