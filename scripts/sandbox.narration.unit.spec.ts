import type { RecordedEvent } from '@caseloop/contracts';
import { narrate } from './sandbox.narration';

const stack = {
  urls: { casePage: 'http://127.0.0.1:3007', services: { evidence: 'http://127.0.0.1:3005' } },
  remote: { path: '/srv/git/app' },
} as unknown as Parameters<typeof narrate>[1];

/** Only what the narration reads of an event. */
const event = (type: string, data: Record<string, unknown>) =>
  ({ type, aggregateId: 'C01', data }) as unknown as RecordedEvent;

describe('the sandbox narration', () => {
  it('says when a case waits for the reporter, so a quiet terminal does not look stuck', () => {
    expect(
      narrate(
        event('ClarificationRequested', { missing: ['evidence', 'privacy_scope'], question: '…' }),
        stack,
      ),
    ).toBe(
      'case C01: waits for the reporter: asked in the thread for evidence, privacy scope (reply there as the reporter)',
    );
    expect(
      narrate(event('ClarificationHandedOff', { missing: ['expected'], known: [], rounds: 2 }), stack),
    ).toBe(
      'case C01: still missing expected after 2 question(s): handed to a reviewer ("actionable" in the thread makes it a task)',
    );
  });

  it('tells a reply in the thread from another report of the same bug', () => {
    expect(narrate(event('SourceLinked', { sourceId: 'discord-2', via: 'thread' }), stack)).toBe(
      'case C01: a reply in its thread joined the case (discord-2)',
    );
    expect(narrate(event('SourceLinked', { sourceId: 'discord-3', via: 'semantic_match' }), stack)).toBe(
      'case C01: another report linked (discord-3)',
    );
    expect(narrate(event('LinkReviewRequested', { sourceId: 'discord-4' }), stack)).toBe(
      'case C01: report discord-4 may be the same bug: held until a reviewer writes "same" or "different" in its thread',
    );
  });

  it('says how feedback becomes a task', () => {
    expect(narrate(event('CaseClassified', { classification: 'feedback' }), stack)).toBe(
      'case C01: classified feedback (a product case: a reviewer writes "actionable" in the thread to make it a task)',
    );
    expect(narrate(event('CaseClassified', { classification: 'bug' }), stack)).toBe(
      'case C01: classified bug',
    );
  });

  it('says each check as it ends, so minutes of install and tests do not look stuck', () => {
    const revision = 'a'.repeat(40);
    expect(
      narrate(event('CheckStarted', { revision, name: 'setup:install', index: 0, total: 3 }), stack),
    ).toBe('case C01: checks running at aaaaaaaaaaaa (3 steps)');
    expect(narrate(event('CheckStarted', { revision, name: 'lint', index: 1, total: 3 }), stack)).toBeNull();
    const finished = (index: number, result: Record<string, unknown>) =>
      narrate(event('CheckFinished', { index, total: 3, result: { revision, ...result } }), stack);
    expect(finished(0, { name: 'setup:install', outcome: 'passed', durationMs: 26_213, exitCode: 0 })).toBe(
      'case C01: 1/3 setup:install passed in 26.2 s',
    );
    expect(finished(2, { name: 'test', outcome: 'failed', durationMs: 40_300, exitCode: 1 })).toBe(
      'case C01: 3/3 test failed (exit 1) in 40.3 s',
    );
    expect(finished(2, { name: 'test', outcome: 'timeout', durationMs: 600_000, exitCode: null })).toBe(
      'case C01: 3/3 test timeout in 600.0 s',
    );
  });
});
