import { readFile } from 'node:fs/promises';
import { EmbeddingsPort } from '@caseloop/identity';
import { z } from 'zod';

export interface OpenAiEmbeddingsOptions {
  /** Base URL of an OpenAI-compatible API, e.g. `http://127.0.0.1:8080/v1`; `/embeddings` is appended. */
  url: string;
  /** A file holding the API key (never the key itself: it must not reach logs or events). */
  keyFile: string | null;
  model: string;
  timeoutMs: number;
}

const responseSchema = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })).min(1),
});

export class EmbeddingsError extends Error {
  constructor(
    readonly code: 'http_status' | 'bad_response' | 'timeout' | 'unreachable' | 'key_file',
    message: string,
  ) {
    super(message);
    this.name = 'EmbeddingsError';
  }
}

/**
 * `POST {url}/embeddings` with `{model, input}`. The key is read from its file on first use and
 * kept in this instance only. Errors carry a code and never the key or the texts.
 */
export class OpenAiEmbeddingsAdapter implements EmbeddingsPort {
  private key: string | null | undefined;
  private readonly controllers = new Set<AbortController>();

  constructor(private readonly options: OpenAiEmbeddingsOptions) {}

  async embed(texts: readonly string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const key = await this.apiKey();
    const ctl = new AbortController();
    this.controllers.add(ctl);
    const timer = setTimeout(() => ctl.abort(), this.options.timeoutMs);
    try {
      let res: Response;
      try {
        res = await fetch(`${this.options.url.replace(/\/+$/, '')}/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
          body: JSON.stringify({ model: this.options.model, input: texts }),
          signal: ctl.signal,
        });
      } catch (e) {
        if (ctl.signal.aborted)
          throw new EmbeddingsError('timeout', `embeddings request exceeded ${this.options.timeoutMs} ms`);
        throw new EmbeddingsError('unreachable', `embeddings endpoint unreachable: ${(e as Error).name}`);
      }
      if (!res.ok) throw new EmbeddingsError('http_status', `embeddings endpoint answered ${res.status}`);
      const parsed = responseSchema.safeParse(await res.json().catch(() => null));
      if (!parsed.success || parsed.data.data.length !== texts.length) {
        throw new EmbeddingsError('bad_response', 'embeddings response does not match the request');
      }
      const out = [...parsed.data.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
      const dim = out[0]?.length ?? 0;
      if (dim === 0 || out.some((v) => v.length !== dim))
        throw new EmbeddingsError('bad_response', 'embeddings of unequal dimension');
      return out;
    } finally {
      clearTimeout(timer);
      this.controllers.delete(ctl);
    }
  }

  async close(): Promise<void> {
    for (const c of this.controllers) c.abort();
    this.controllers.clear();
  }

  private async apiKey(): Promise<string | null> {
    if (this.key !== undefined) return this.key;
    if (!this.options.keyFile) return (this.key = null);
    try {
      this.key = (await readFile(this.options.keyFile, 'utf8')).trim() || null;
    } catch (e) {
      throw new EmbeddingsError(
        'key_file',
        `embeddings key file unreadable (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    return this.key;
  }
}
