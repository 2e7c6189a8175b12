import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalS3, startLocalS3 } from '@caseloop/testing';
import { S3ArtifactStore, S3Settings, sha256Of } from './s3-artifact.store';

jest.setTimeout(60_000);

const CASE = 'C01JTESTCASE0000000000000000';
const REV = 'a'.repeat(40);

/**
 * A loopback proxy in front of the S3 server that flips one byte of every object body it returns:
 * a store that accepts the write and hands back different bytes.
 */
function startCorruptingProxy(target: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const out = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (up) => {
        const chunks: Buffer[] = [];
        up.on('data', (c: Buffer) => chunks.push(c));
        up.on('end', () => {
          const body = Buffer.concat(chunks);
          if (req.method === 'GET' && (req.url ?? '').includes('/cases/') && body.length > 0) {
            body[0] = (body[0] as number) ^ 0xff;
          }
          res.writeHead(up.statusCode ?? 502, up.headers);
          res.end(body);
        });
      },
    );
    req.pipe(out);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () => new Promise<void>((r) => server.close(() => r())),
      }),
    ),
  );
}

async function findObjectFile(dir: string): Promise<string> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const hit = entries.find((e) => e.isFile() && e.name.endsWith('._S3rver_object'));
  if (!hit) throw new Error('no object file under the S3 directory');
  return path.join(hit.parentPath, hit.name);
}

describe('S3ArtifactStore against a real S3 server on loopback', () => {
  let dir: string;
  let s3: LocalS3;
  let settings: S3Settings;
  const stores: S3ArtifactStore[] = [];
  const open = (over: Partial<S3Settings> = {}): S3ArtifactStore => {
    const store = new S3ArtifactStore({ ...settings, ...over });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'evidence-s3-'));
    s3 = await startLocalS3({ dir });
    settings = {
      endpoint: s3.endpoint,
      region: s3.region,
      bucket: 'evidence-store-test',
      forcePathStyle: true,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      presignTtlSeconds: 60,
    };
    await open().ensureBucket();
  });

  afterAll(async () => {
    for (const s of stores) s.close();
    await s3.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes under cases/<case>/<revision>/<sha256>, reads it back verified, and is idempotent on the key', async () => {
    const store = open();
    const body = Buffer.from('check log: 12 passed\n');
    const first = await store.store({
      caseId: CASE,
      revision: REV,
      body,
      contentType: 'text/plain',
      tags: { kind: 'check_log' },
    });
    expect(first).toEqual({
      status: 'stored',
      key: `cases/${CASE}/${REV}/${sha256Of(body)}`,
      sha256: sha256Of(body),
      bytes: body.length,
      alreadyPresent: false,
    });
    const again = await store.store({
      caseId: CASE,
      revision: REV,
      body,
      contentType: 'text/plain',
      tags: {},
    });
    expect(again).toMatchObject({ status: 'stored', alreadyPresent: true });
    expect((await store.read(first.key)).equals(body)).toBe(true);

    const link = await store.presignedLink(first.key, 30);
    expect(link).toContain('X-Amz-Expires=30');
    const fetched = await fetch(link);
    expect(fetched.status).toBe(200);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(body)).toBe(true);
  });

  it('refuses to call an object durable when the store returns different bytes on read-back', async () => {
    const proxy = await startCorruptingProxy(s3.endpoint);
    try {
      const store = open({ endpoint: proxy.endpoint });
      const body = Buffer.from('diff --git a/x b/x\n+fixed\n');
      const outcome = await store.store({
        caseId: CASE,
        revision: REV,
        body,
        contentType: 'text/x-diff',
        tags: {},
      });
      expect(outcome).toMatchObject({ status: 'durability_failed', expected: sha256Of(body) });
      if (outcome.status !== 'durability_failed') throw new Error('unreachable');
      expect(outcome.actual).not.toBeNull();
      expect(outcome.actual).not.toBe(sha256Of(body));
      // Through the honest endpoint the bytes are intact: only the read path lied.
      expect((await open().read(outcome.key)).equals(body)).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it('does not trust an existing object on the key: damage at rest fails the next store of the same bytes', async () => {
    const isolated = await mkdtemp(path.join(tmpdir(), 'evidence-s3-rest-'));
    const local = await startLocalS3({ dir: isolated, buckets: ['evidence-rest'] });
    try {
      const store = open({ endpoint: local.endpoint, bucket: 'evidence-rest' });
      const body = Buffer.from('screenshot bytes stand-in');
      expect(
        await store.store({ caseId: CASE, revision: REV, body, contentType: 'image/png', tags: {} }),
      ).toMatchObject({
        status: 'stored',
      });
      // Rot on disk under the server, same length, different content.
      await writeFile(await findObjectFile(isolated), Buffer.from('Screenshot bytes stand-in'));
      const outcome = await store.store({
        caseId: CASE,
        revision: REV,
        body,
        contentType: 'image/png',
        tags: {},
      });
      expect(outcome).toMatchObject({ status: 'durability_failed', expected: sha256Of(body) });
    } finally {
      await local.close();
      await rm(isolated, { recursive: true, force: true });
    }
  });
});
