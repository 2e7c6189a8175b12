import { readFileSync } from 'node:fs';
import { RepositoriesFile, TargetRepository } from '@caseloop/target-repositories';

/** The configured target repositories, validated once at start, looked up by the id a task names. */
export class RepositoryRegistry {
  private readonly byId: ReadonlyMap<string, TargetRepository>;

  constructor(file: RepositoriesFile) {
    this.byId = new Map(file.repositories.map((r) => [r.id, r]));
  }

  get(id: string): TargetRepository | undefined {
    return this.byId.get(id);
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  /**
   * The credential values themselves, so check output that happens to print one is redacted.
   * Read at call time: a rotated file is picked up. An unreadable file contributes nothing here;
   * git reports it when it needs it.
   */
  knownSecrets(): string[] {
    const values: string[] = [];
    for (const r of this.byId.values()) {
      for (const file of Object.values(r.secretFiles ?? {})) {
        try {
          values.push(readFileSync(file, 'utf8').split('\n')[0]?.trim() ?? '');
        } catch {
          // reported by the check that needs it
        }
      }
      if (!r.credentialsFile) continue;
      try {
        const line = readFileSync(r.credentialsFile, 'utf8').split('\n')[0]?.trim() ?? '';
        values.push(line, line.slice(line.indexOf(':') + 1));
      } catch {
        // reported by git at fetch time
      }
    }
    return values.filter((v) => v.length > 0);
  }
}
