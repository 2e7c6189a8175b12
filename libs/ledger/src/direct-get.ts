import { JetStreamManager, StoredMsg } from 'nats';

export type DirectQuery = { seq: number; next_by_subj?: string } | { last_by_subj: string };

/**
 * nats.js 2.29 ships the direct-get API on every JetStreamManager but leaves it out of the type;
 * this is the one place that reaches for it.
 */
export function directGet(jsm: JetStreamManager, stream: string, query: DirectQuery): Promise<StoredMsg> {
  const direct = (
    jsm as JetStreamManager & { direct?: { getMessage(s: string, q: DirectQuery): Promise<StoredMsg> } }
  ).direct;
  if (!direct) throw new Error('this nats.js build has no direct-get API');
  return direct.getMessage(stream, query);
}

/** Direct get found no message at or after the sequence asked for (404, or JetStream's "no message found"). */
export function isNoMessage(e: unknown): boolean {
  const err = e as { code?: string; api_error?: { err_code?: number; code?: number } };
  return err.code === '404' || err.api_error?.code === 404 || err.api_error?.err_code === 10037;
}
