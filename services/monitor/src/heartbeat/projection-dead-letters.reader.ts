import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ProjectionDeadLetterRef } from '../findings/findings.rules';

/** How far the monitor has read each projection version's dead letters: `<projection>@<version>` → seq. */
export type DeadLetterWatermarks = ReadonlyMap<string, number>;

export const watermarkKey = (projection: string, version: number): string => `${projection}@${version}`;

/**
 * Reads the open dead letters of each projection's active version (the runner's
 * `projection_dead_letters` rows, without their bodies) past the sequence the monitor has already
 * handled. One live runner writes a version's letters, in stream order and committed batch by batch,
 * so a letter at or below a version's watermark was seen when the watermark was taken. A version
 * without a watermark is read from its first letter. Each projection's read is one range of the
 * table's primary key, at most `limit` rows; the rest come at the next read.
 */
@Injectable()
export class ProjectionDeadLettersReader {
  constructor(
    private readonly ds: DataSource,
    private readonly schema: string,
  ) {}

  async openSince(watermarks: DeadLetterWatermarks, limit: number): Promise<ProjectionDeadLetterRef[]> {
    const s = `"${this.schema}"`;
    let rows: {
      projection: string;
      version: number;
      seq: string;
      subject: string;
      code: string;
      error: string;
    }[];
    try {
      rows = await this.ds.query(
        `select h.projection, h.active_version as version, d.seq, d.subject, d.code, d.error
           from ${s}.projection_heads h
           cross join lateral (
             select seq, left(subject, 200) as subject, left(code, 64) as code, left(error, 2000) as error
               from ${s}.projection_dead_letters
              where projection = h.projection and version = h.active_version
                and seq > coalesce(($1::jsonb ->> (h.projection || '@' || h.active_version))::bigint, 0)
                and redriven_at is null
              order by seq
              limit $2
           ) d
          order by h.projection, d.seq`,
        [JSON.stringify(Object.fromEntries(watermarks)), limit],
      );
    } catch (e) {
      // Before the projection runtime is migrated there is nothing to read.
      if ((e as { code?: string }).code === '42P01') return [];
      throw e;
    }
    return rows.map((r) => ({
      projection: r.projection,
      version: Number(r.version),
      seq: Number(r.seq),
      subject: r.subject,
      code: r.code,
      error: r.error,
    }));
  }
}
