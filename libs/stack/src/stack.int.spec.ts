import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NATS_URL, PG_URL, uniqueSuffix } from '@caseloop/testing';
import { dropStackState, Stack, startStack } from './stack';

jest.setTimeout(300_000);

/** The environment a running process was started with, as the kernel holds it. */
async function environmentOf(pid: number): Promise<Record<string, string>> {
  const raw = await readFile(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(
    raw
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

describe('a second evidence process', () => {
  let root: string;
  let stack: Stack | undefined;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'caseloop-stack-'));
    const namespace = uniqueSuffix('st');
    stack = await startStack({
      dir: join(root, 'stack'),
      natsUrl: NATS_URL,
      databaseUrl: PG_URL,
      namespace,
      stream: `T${namespace.toUpperCase()}`,
      dbSchema: namespace,
      leaseBucket: `${namespace}-leases`,
      services: ['evidence'],
      readyTimeoutMs: 180_000,
    });
  });

  afterAll(async () => {
    await stack?.stop();
    if (stack) await dropStackState(stack).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  it('runs from a directory of its own, as on another host, with the rest of the configuration the same', async () => {
    const s = stack as Stack;
    const replica = await s.addReplica('evidence');
    const first = await environmentOf(s.services.evidence.pid as number);
    const second = await environmentOf(replica.pid as number);

    // Two processes proving one revision must not share checkouts, mirrors or setup runs.
    expect(first.EVIDENCE_DIR).toBe(join(s.dir, 'evidence'));
    expect(second.EVIDENCE_DIR).toBe(join(s.dir, 'evidence-2'));
    const rest = (env: Record<string, string>) => {
      // Each process also has its own instance id, which its /healthz repeats.
      const { EVIDENCE_DIR: _dir, HTTP_PORT: _port, CASELOOP_INSTANCE_ID: _id, ...others } = env;
      return others;
    };
    expect(rest(second)).toEqual(rest(first));
    expect(second.HTTP_PORT).not.toBe(first.HTTP_PORT);
    expect(second.CASELOOP_INSTANCE_ID).not.toBe(first.CASELOOP_INSTANCE_ID);
  });
});
