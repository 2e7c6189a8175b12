import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

interface Project {
  type: 'application' | 'library';
  root: string;
  sourceRoot: string;
  entryFile: string;
}

describe('nest-cli.json (monorepo)', () => {
  const cli = JSON.parse(readFileSync(join(root, 'nest-cli.json'), 'utf8')) as {
    monorepo: boolean;
    projects: Record<string, Project>;
  };
  const dirs = (d: string) =>
    readdirSync(join(root, d), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();

  it('lists every service as an application with its main.ts', () => {
    expect(cli.monorepo).toBe(true);
    const apps = Object.entries(cli.projects).filter(([, p]) => p.type === 'application');
    expect(apps.map(([n]) => n).sort()).toEqual(dirs('services'));
    for (const [name, p] of apps) {
      expect(p).toMatchObject({
        root: `services/${name}`,
        sourceRoot: `services/${name}/src`,
        entryFile: 'main',
      });
      expect(existsSync(join(root, p.sourceRoot, `${p.entryFile}.ts`))).toBe(true);
    }
  });

  it('lists libraries that exist, each with its index.ts and its tsconfig path alias', () => {
    const tsconfig = readFileSync(join(root, 'tsconfig.json'), 'utf8');
    const libs = Object.entries(cli.projects).filter(([, p]) => p.type === 'library');
    expect(libs.map(([n]) => n).filter((n) => !dirs('libs').includes(n))).toEqual([]);
    for (const core of ['contracts', 'ledger', 'platform', 'testing'])
      expect(cli.projects[core]?.type).toBe('library');
    for (const [name, p] of libs) {
      expect(p).toMatchObject({ root: `libs/${name}`, sourceRoot: `libs/${name}/src`, entryFile: 'index' });
      expect(existsSync(join(root, p.sourceRoot, 'index.ts'))).toBe(true);
      expect(tsconfig).toContain(`"@caseloop/${name}": ["libs/${name}/src"]`);
    }
  });
});
