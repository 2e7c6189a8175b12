// npm run chaos — fault injection over the whole loop, as separate jest runs, with a table at the end:
//   1. the crash test (test/crash.e2e.spec.ts) for every service × point, --seeds runs each;
//   2. the burst (test/chaos/burst.chaos.spec.ts): reports and duplicates at once, two service kills
//      (the coordinator, and the lease service held down ~20 s), a restart of a nats-server this run
//      starts itself, and poison (not JSON, an unknown event type) published onto a case's subjects.
// Options: --seeds <n> (default 3), --only <service>[,<service>], --points <i,j> (indexes),
//          --no-crash, --no-burst, --burst-runs <n> (default 1), --log <dir> (each run's output).
// A run is long (a whole stack per combination): about 48 × seeds × 1–3 min on two cores.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_NAMES } from '@caseloop/stack';
import { CRASH_POINTS } from '../test/e2e/crash-points';

interface Outcome {
  label: string;
  passed: boolean;
  ms: number;
  log: string;
  detail: string;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const flag = (name: string) => process.argv.includes(name);

const seeds = Number(arg('--seeds') ?? 3);
/** The loop's services; the console only reads, so the crash test does not kill it. */
const LOOP_SERVICES = SERVICE_NAMES.filter((s) => s !== 'console');
const only = arg('--only')?.split(',') ?? [...LOOP_SERVICES];
const pointIdx = arg('--points')?.split(',').map(Number) ?? CRASH_POINTS.map((_p, i) => i);
const burstRuns = Number(arg('--burst-runs') ?? 1);
const logDir = arg('--log') ?? join(tmpdir(), `caseloop-chaos-${Date.now()}`);
mkdirSync(logDir, { recursive: true });

for (const s of only)
  if (!(LOOP_SERVICES as readonly string[]).includes(s)) {
    process.stderr.write(`--only: ${s} is not one of ${LOOP_SERVICES.join(', ')}\n`);
    process.exit(2);
  }

/** One jest run of one file; its output goes to a log file, the last lines of a failure to the table. */
function jestRun(
  label: string,
  file: string,
  env: Record<string, string>,
  project: string,
): Promise<Outcome> {
  const log = join(logDir, `${label.replace(/[^A-Za-z0-9_-]+/g, '_')}.log`);
  const out = createWriteStream(log);
  const started = Date.now();
  const tail: string[] = [];
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [require.resolve('jest/bin/jest'), '--selectProjects', project, '--runInBand', '--ci', file],
      { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (chunk: Buffer) => {
      out.write(chunk);
      for (const line of chunk.toString().split('\n')) {
        if (/●|eventually\(|Expected|Received|timed out/.test(line)) tail.push(line.trim());
        if (tail.length > 6) tail.shift();
      }
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('exit', (code) => {
      out.end();
      resolve({
        label,
        passed: code === 0,
        ms: Date.now() - started,
        log,
        detail: code === 0 ? '' : (tail.find((l) => l.startsWith('●')) ?? tail.at(-1) ?? `exit ${code}`),
      });
    });
  });
}

const fmt = (ms: number) => `${(ms / 1000).toFixed(0)} s`;

async function main(): Promise<void> {
  const crash = new Map<string, Outcome[]>();
  const started = Date.now();
  process.stdout.write(`chaos: logs in ${logDir}\n`);
  if (!flag('--no-crash')) {
    for (let seed = 1; seed <= seeds; seed++)
      for (const service of only)
        for (const i of pointIdx) {
          const point = CRASH_POINTS[i];
          if (!point) continue;
          const label = `${service} @ ${point.name} #${seed}`;
          const o = await jestRun(
            label,
            'test/crash.e2e.spec.ts',
            {
              CASELOOP_CRASH_SERVICE: service,
              CASELOOP_CRASH_POINT: point.name,
              CASELOOP_E2E_SEED: String(seed * 7919 + i),
            },
            'e2e',
          );
          const key = `${service}|${point.name}`;
          crash.set(key, [...(crash.get(key) ?? []), o]);
          process.stdout.write(
            `${o.passed ? 'pass' : 'FAIL'}  ${label}  ${fmt(o.ms)}${o.passed ? '' : `  ${o.detail}  (${o.log})`}\n`,
          );
        }
  }
  const bursts: Outcome[] = [];
  if (!flag('--no-burst')) {
    for (let n = 1; n <= burstRuns; n++) {
      const o = await jestRun(
        `burst #${n}`,
        'test/chaos/burst.chaos.spec.ts',
        { CASELOOP_CHAOS: '1' },
        'chaos',
      );
      bursts.push(o);
      process.stdout.write(
        `${o.passed ? 'pass' : 'FAIL'}  burst #${n}  ${fmt(o.ms)}${o.passed ? '' : `  ${o.detail}  (${o.log})`}\n`,
      );
    }
  }

  // The table: one row per service, one column per point, passes/runs in each cell.
  const lines: string[] = [];
  if (crash.size > 0) {
    const cols = pointIdx.flatMap((i) => (CRASH_POINTS[i] ? [CRASH_POINTS[i].name] : []));
    lines.push(`| service | ${cols.join(' | ')} |`, `|---|${cols.map(() => '---').join('|')}|`);
    for (const service of only) {
      const cells = cols.map((c) => {
        const runs = crash.get(`${service}|${c}`) ?? [];
        const ok = runs.filter((r) => r.passed).length;
        return runs.length === 0 ? '–' : `${ok}/${runs.length}${ok < runs.length ? ' ✗' : ''}`;
      });
      lines.push(`| ${service} | ${cells.join(' | ')} |`);
    }
    const all = [...crash.values()].flat();
    const ms = all.map((r) => r.ms).sort((a, b) => a - b);
    lines.push(
      '',
      `crash: ${all.filter((r) => r.passed).length}/${all.length} runs passed; median ${fmt(ms[Math.floor(ms.length / 2)] ?? 0)}, slowest ${fmt(ms.at(-1) ?? 0)}`,
    );
  }
  for (const b of bursts)
    lines.push(`${b.label}: ${b.passed ? 'passed' : `FAILED — ${b.detail}`} in ${fmt(b.ms)} (${b.log})`);
  lines.push(`chaos: ${fmt(Date.now() - started)} in all; logs in ${logDir}`);
  process.stdout.write(`\n${lines.join('\n')}\n`);
  const failed = [...crash.values()].flat().some((r) => !r.passed) || bursts.some((b) => !b.passed);
  process.exit(failed ? 1 : 0);
}

void main();
