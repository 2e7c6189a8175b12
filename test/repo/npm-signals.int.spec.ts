import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(60_000);

const root = join(__dirname, '..', '..');
const scripts = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/**
 * `npm start` and `npm test` run long: a process manager or a CI job that stops them signals npm,
 * which passes the signal to the shell that runs the script and no further. Each script's shell must
 * become the script (exec) so that the signal reaches the sandbox or jest, which stop cleanly.
 * Each script line is run by npm as written, with its bash script swapped for a probe that records
 * the signal it receives.
 */
describe.each(['start', 'test'])('npm %s', (name) => {
  const line = scripts[name] as string;
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'caseloop-npm-signals-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(['SIGTERM', 'SIGINT'] as const)('passes %s on to what the script runs', async (signal) => {
    const script = /bash (scripts\/[\w.-]+\.sh)/.exec(line)?.[1];
    expect(script).toBeDefined();
    const got = join(dir, `${signal}.got`);
    writeFileSync(
      join(dir, 'probe.sh'),
      [
        '#!/usr/bin/env bash',
        'set -euo pipefail',
        `exec node -e "for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => { require('fs').writeFileSync(process.argv[1], s); process.exit(0); }); require('fs').writeFileSync(process.argv[1] + '.up', String(process.pid)); setInterval(() => {}, 1000);" ${JSON.stringify(got)}`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'probe',
        version: '1.0.0',
        scripts: { [name]: line.replace(script!, 'probe.sh') },
      }),
    );
    const npm = spawn('npm', [name === 'test' ? 'test' : 'start', '--silent'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
      stdio: 'ignore',
    });
    const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
    try {
      const t0 = Date.now();
      while (!existsSync(`${got}.up`)) {
        if (Date.now() - t0 > 30_000) throw new Error('the probe never started');
        await new Promise((r) => setTimeout(r, 50));
      }
      npm.kill(signal);
      const t1 = Date.now();
      while (!existsSync(got) && Date.now() - t1 < 5_000) await new Promise((r) => setTimeout(r, 50));
      expect(existsSync(got) ? readFileSync(got, 'utf8') : 'nothing reached the script').toBe(signal);
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
      await exited;
      // A probe the signal never reached would outlive the test.
      const pid = existsSync(`${got}.up`) ? Number(readFileSync(`${got}.up`, 'utf8')) : 0;
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });
});
