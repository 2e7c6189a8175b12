import 'reflect-metadata';
import { type RecordedEvent } from '@caseloop/contracts';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import { IntakeConsumer } from '../intake/intake.consumer';
import { foldCaseStatus, renderCaseStatus } from './case-status';
import { STATUS_EVENTS } from './status.updater';

const REV = 'b'.repeat(40);
let seq = 0;
const ev = (type: string, data: Record<string, unknown>): RecordedEvent =>
  ({ type, data, sequence: ++seq }) as unknown as RecordedEvent;
const result = (name: string, outcome: string) => ({
  name,
  kind: 'other',
  outcome,
  revision: REV,
  durationMs: 1,
  exitCode: 0,
  outputSha256: null,
  outputBytes: 0,
});
const started = (index: number, name: string, total = 2) =>
  ev('CheckStarted', { taskId: 'T1', revision: REV, name, kind: 'other', index, total, attemptId: null });
const finished = (index: number, name: string, outcome: string, total = 2) =>
  ev('CheckFinished', {
    taskId: 'T1',
    index,
    total,
    attemptId: null,
    result: result(name, outcome),
    excerpt: { head: [], tail: [], omittedLines: 0 },
    logKey: null,
  });
const checksLine = (events: RecordedEvent[]): string =>
  renderCaseStatus(foldCaseStatus('C1', events)).split('\n')[2] as string;

describe('the live status counts checks one by one', () => {
  it('moves with CheckStarted / CheckFinished, then shows the run’s tally', () => {
    expect(checksLine([started(0, 'lint')])).toBe(
      '⏳ Checks 0 of 2 run (0 passed) on `bbbbbbbbbbbb` · running `lint`',
    );
    expect(checksLine([started(0, 'lint'), finished(0, 'lint', 'passed'), started(1, 'test')])).toBe(
      '⏳ Checks 1 of 2 run (1 passed) on `bbbbbbbbbbbb` · running `test`',
    );
    const run = [
      started(0, 'lint'),
      finished(0, 'lint', 'passed'),
      started(1, 'test'),
      finished(1, 'test', 'timeout'),
    ];
    expect(checksLine(run)).toBe('⏳ Checks 2 of 2 run (1 passed, 1 failed) on `bbbbbbbbbbbb`');
    const completed = ev('ChecksCompleted', {
      taskId: 'T1',
      revision: REV,
      targetHead: REV,
      results: [result('lint', 'passed'), result('test', 'timeout')],
      passed: false,
    });
    expect(checksLine([...run, completed])).toBe('❌ Checks 1 of 2 passed on `bbbbbbbbbbbb`');
  });

  it('starts the count again for a new run (index 0), and counts a finish whose start was missed', () => {
    const first = [started(0, 'lint'), finished(0, 'lint', 'failed'), started(1, 'test')];
    expect(checksLine([...first, started(0, 'lint', 3)])).toBe(
      '⏳ Checks 0 of 3 run (0 passed) on `bbbbbbbbbbbb` · running `lint`',
    );
    expect(checksLine([finished(0, 'lint', 'passed')])).toBe(
      '⏳ Checks 1 of 2 run (1 passed) on `bbbbbbbbbbbb`',
    );
  });

  it('every status event has a consumer handler', () => {
    const proto = IntakeConsumer.prototype as unknown as Record<string, object>;
    const handled = Object.getOwnPropertyNames(proto).flatMap(
      (name) => (Reflect.getMetadata(PATTERN_METADATA, proto[name] as object) as string[] | undefined) ?? [],
    );
    expect(handled).toEqual(expect.arrayContaining([...STATUS_EVENTS]));
  });
});
