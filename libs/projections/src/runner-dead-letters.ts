import { QueryRunner } from 'typeorm';
import { ProjectionCatalog } from './projection-catalog';

/** A message of the stream that breaks its contract: set aside with its sequence, never applied. */
export interface DeadLetter {
  seq: number;
  subject: string;
  code: string;
  error: string;
  body: Buffer;
}

/** Records the batch's dead letters in the batch's transaction; a batch applied again adds none twice. */
export async function recordDeadLetters(
  qr: QueryRunner,
  catalog: ProjectionCatalog,
  projection: string,
  version: number,
  dead: readonly DeadLetter[],
): Promise<void> {
  const params: unknown[] = [];
  const tuples = dead.map((d) => {
    params.push(projection, version, d.seq, d.subject, d.code, d.error, d.body);
    const n = params.length;
    return `($${n - 6}, $${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n})`;
  });
  await qr.query(
    `insert into ${catalog.t('projection_dead_letters')} (projection, version, seq, subject, code, error, body)
     values ${tuples.join(', ')} on conflict (projection, version, seq) do nothing`,
    params,
  );
}

/** One warning per dead letter, once its batch has committed. */
export function logDeadLetters(
  log: ((entry: Record<string, unknown>) => void) | undefined,
  projection: string,
  dead: readonly DeadLetter[],
): void {
  for (const d of dead) {
    log?.({
      level: 'warn',
      msg: 'dead letter',
      projection,
      seq: d.seq,
      subject: d.subject,
      code: d.code,
    });
  }
}
