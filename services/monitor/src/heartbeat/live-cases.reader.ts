import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LiveCase } from './live-set';

const TERMINAL = ['approved', 'rejected', 'duplicate'];

/** Reads the live set (every non-terminal case) from the case-view projection's reader view. */
@Injectable()
export class LiveCasesReader {
  constructor(
    private readonly ds: DataSource,
    private readonly schema: string,
  ) {}

  async liveCases(): Promise<LiveCase[]> {
    let rows: { case_id: string; status: string; last_seq: string }[];
    try {
      rows = await this.ds.query(
        `select case_id, status, last_seq from "${this.schema}".cases where status <> all($1) order by updated_at`,
        [TERMINAL],
      );
    } catch (e) {
      // Before the projection's first version exists there is no live set yet.
      if ((e as { code?: string }).code === '42P01') return [];
      throw e;
    }
    return rows.map((r) => ({ caseId: r.case_id, status: r.status, lastSeq: Number(r.last_seq) }));
  }
}
