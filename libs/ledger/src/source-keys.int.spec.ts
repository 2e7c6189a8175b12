import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@caseloop/testing';
import { connect } from 'nats';
import { connectLedger, Ledger } from './connect';
import { SourceKeys, sourceKeyBucket, sourceKeyId } from './source-keys';

jest.setTimeout(60_000);

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : [p];
  });

/**
 * Forgetting must remove a key's bytes from the server's store, not only hide them: checked on a
 * nats-server of its own (own port and store directory), by looking for the key in its files.
 */
describe('source keys on disk', () => {
  let dir: string;
  let server: ChildProcess;
  let ledger: Ledger;
  let keys: SourceKeys;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'caseloop-keys-'));
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    server = spawn('/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
      stdio: 'ignore',
    });
    const url = `nats://127.0.0.1:${port}`;
    await eventually(
      async () => (await connect({ servers: url, reconnect: false })).close().then(() => true),
      {
        timeoutMs: 10_000,
        what: 'the nats-server of this test',
      },
    );
    ledger = await connectLedger({ servers: url, namespace: 'keys', stream: 'KEYS', name: 'intake' });
    await ledger.provision();
    keys = await SourceKeys.open(ledger.js, ledger.jsm, 'keys');
  });
  afterAll(async () => {
    await ledger?.close();
    server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  const storedKey = async (sourceId: string): Promise<Buffer> => {
    const kv = await ledger.js.views.kv(sourceKeyBucket('keys'), { bindOnly: true });
    return Buffer.from((await kv.get(sourceKeyId(sourceId)))!.value);
  };
  const onDisk = (bytes: Buffer) => files(dir).filter((f) => readFileSync(f).includes(bytes));

  it('erases the key from the store when a source is forgotten (a marker alone would leave it)', async () => {
    const sealed = await keys.seal('discord-7', 'raw text');
    const key = await storedKey('discord-7');
    expect(onDisk(key).length).toBeGreaterThan(0);
    expect(await keys.forget('discord-7')).toBe('erased');
    expect(onDisk(key)).toEqual([]);
    expect(sealed !== 'forgotten' && (await keys.open('discord-7', sealed))).toBeNull();

    // The contrast: a KV purge marker only, as a default bucket offers, leaves the bytes behind.
    await keys.seal('discord-8', 'raw text');
    const other = await storedKey('discord-8');
    const kv = await ledger.js.views.kv(sourceKeyBucket('keys'), { bindOnly: true });
    await kv.purge(sourceKeyId('discord-8'));
    expect(onDisk(other).length).toBeGreaterThan(0);
  });
});
