import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { RepositoriesFile, repositoriesFile, TargetRepository } from './repository.schema';

export class RepositoryConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid repositories file ${file}: ${problems.join('; ')}`);
    this.name = 'RepositoryConfigError';
  }
}

/** `repositories[1].checks[0].command`: the key that is wrong, never the value in it. */
const keyOf = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)),
    '',
  ) || '(root)';

export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map(
    (i) => `${keyOf(i.path)}: ${i.code === 'custom' || i.code === 'invalid_format' ? i.message : i.code}`,
  );
}

/** Validates parsed data; relative paths are resolved against `baseDir` (the file's directory). */
export function parseRepositories(raw: unknown, file: string, baseDir: string): RepositoriesFile {
  const parsed = repositoriesFile.safeParse(raw);
  if (!parsed.success) throw new RepositoryConfigError(file, describeIssues(parsed.error));
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(baseDir, p));
  return {
    repositories: parsed.data.repositories.map((r): TargetRepository => ({
      ...r,
      ...(r.credentialsFile ? { credentialsFile: abs(r.credentialsFile) } : {}),
      ...(r.secretFiles
        ? { secretFiles: Object.fromEntries(Object.entries(r.secretFiles).map(([k, f]) => [k, abs(f)])) }
        : {}),
      ...(r.client ? { client: { ...r.client, flow: abs(r.client.flow) } } : {}),
    })),
  };
}

/** Reads a YAML (or JSON, which is YAML) repositories file. Throws RepositoryConfigError naming keys. */
export function loadRepositoriesFile(file: string): RepositoriesFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new RepositoryConfigError(file, [`cannot read: ${(e as NodeJS.ErrnoException).code ?? 'error'}`]);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch {
    throw new RepositoryConfigError(file, ['not valid YAML or JSON']);
  }
  return parseRepositories(raw, file, dirname(resolve(file)));
}
