import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddingsError, OpenAiEmbeddingsAdapter } from './embeddings.adapter';
import { IdentityIndex } from '@caseloop/identity';

/** A local stand-in for an OpenAI-compatible endpoint: a bag-of-letters vector per input. */
function vectorOf(text: string): number[] {
  const v = new Array(26).fill(0) as number[];
  for (const ch of text.toLowerCase()) {
    const i = ch.charCodeAt(0) - 97;
    if (i >= 0 && i < 26) v[i] = (v[i] as number) + 1;
  }
  return v;
}

const body = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let s = '';
    req.on('data', (c: Buffer) => (s += c.toString()));
    req.on('end', () => resolve(s));
  });

describe('OpenAiEmbeddingsAdapter against a local stub server', () => {
  let server: Server;
  let url: string;
  let dir: string;
  const seen: Array<{ auth: string | undefined; model: string; path: string }> = [];
  let mode: 'ok' | 'fail' | 'short' = 'ok';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emb-'));
    server = createServer(async (req, res) => {
      const parsed = JSON.parse(await body(req)) as { model: string; input: string[] };
      seen.push({ auth: req.headers.authorization, model: parsed.model, path: req.url ?? '' });
      if (mode === 'fail') {
        res.writeHead(503).end();
        return;
      }
      const inputs = mode === 'short' ? parsed.input.slice(1) : parsed.input;
      // Answer out of order: the adapter must sort by index.
      const data = inputs
        .map((t, index) => ({ object: 'embedding', index, embedding: vectorOf(t) }))
        .reverse();
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data, model: parsed.model }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('posts to {url}/embeddings with the key from its file and returns vectors in input order', async () => {
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, 'sk-test-123\n');
    const a = new OpenAiEmbeddingsAdapter({ url, keyFile, model: 'text-embedding-3-small', timeoutMs: 5000 });
    const [x, y] = await a.embed(['aaa', 'bbb']);
    expect(x?.[0]).toBe(3);
    expect(y?.[1]).toBe(3);
    expect(seen.at(-1)).toEqual({
      auth: 'Bearer sk-test-123',
      model: 'text-embedding-3-small',
      path: '/v1/embeddings',
    });
    await a.close();
  });

  it('adds a signal the index uses', async () => {
    const a = new OpenAiEmbeddingsAdapter({ url, keyFile: null, model: 'm', timeoutMs: 5000 });
    const [c1, q] = await a.embed(['dashboard charts are blank', 'dashboard charts are blank in safari']);
    const index = new IdentityIndex();
    index.add('C1', 's1', 'dashboard charts are blank', c1);
    const d = index.decide({ text: 'dashboard charts are blank in safari', embedding: q ?? null });
    expect(d.reasons.some((r) => r.startsWith('embedding similarity'))).toBe(true);
    expect(seen.at(-1)?.auth).toBeUndefined();
  });

  it('fails with a code, never with the key, on a bad status or a short answer', async () => {
    const keyFile = join(dir, 'key2');
    writeFileSync(keyFile, 'sk-very-secret');
    const a = new OpenAiEmbeddingsAdapter({ url, keyFile, model: 'm', timeoutMs: 5000 });
    mode = 'fail';
    await expect(a.embed(['x'])).rejects.toMatchObject({ code: 'http_status' });
    mode = 'short';
    const err = (await a.embed(['x', 'y']).catch((e: unknown) => e)) as EmbeddingsError;
    expect(err.code).toBe('bad_response');
    expect(err.message).not.toContain('sk-very-secret');
    mode = 'ok';
    const missing = new OpenAiEmbeddingsAdapter({
      url,
      keyFile: join(dir, 'nope'),
      model: 'm',
      timeoutMs: 5000,
    });
    await expect(missing.embed(['x'])).rejects.toMatchObject({ code: 'key_file' });
  });
});
