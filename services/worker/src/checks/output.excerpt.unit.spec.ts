import { excerptOf } from './output.excerpt';

describe('the excerpt of a check output', () => {
  it('takes out terminal colours and hyperlinks, which a test runner writes even under CI=true', () => {
    const output = [
      '\x1b[1m\x1b[46m RUN \x1b[49m\x1b[22m \x1b[36mv4.0.18 \x1b[39m\x1b[90m/work/app\x1b[39m',
      '',
      ' \x1b[32m✓\x1b[39m src/lib/todos.svelte.test.ts \x1b[2m(\x1b[22m\x1b[2m14 tests\x1b[22m\x1b[2m)\x1b[22m',
      '\x1b]8;;https://vitest.dev\x07docs\x1b]8;;\x07 and \x1b[2K\x1b[1Gdone',
      '\x1b[2m   Duration \x1b[22m 1.03s',
    ].join('\n');
    expect(excerptOf(output)).toEqual({
      head: [
        ' RUN  v4.0.18 /work/app',
        '',
        ' ✓ src/lib/todos.svelte.test.ts (14 tests)',
        'docs and done',
        '   Duration  1.03s',
      ],
      tail: [],
      omittedLines: 0,
    });
  });

  it('keeps the first and last lines of a long output and counts what is left out', () => {
    const output = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\r\n');
    expect(excerptOf(output, 2, 2)).toEqual({
      head: ['line 1', 'line 2'],
      tail: ['line 11', 'line 12'],
      omittedLines: 8,
    });
  });
});
