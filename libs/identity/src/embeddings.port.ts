/**
 * The optional embeddings signal: anything that turns texts into vectors of one dimension.
 * The matcher stays pure: callers embed, then pass vectors to `IdentityIndex.add` and `decide`.
 */
export interface EmbeddingsPort {
  embed(texts: readonly string[]): Promise<number[][]>;
  close(): Promise<void>;
}
