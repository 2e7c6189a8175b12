import type { OutputExcerpt } from '@caseloop/contracts';

const MAX_LINE = 300;

/**
 * The first and last lines of a (redacted) check output: enough to see how a long suite started and
 * how it ended on the case page and in the receipt; the whole log is one link away. Blank lines at
 * either end say nothing and are dropped; each line is cut to what the event allows.
 */
export function excerptOf(output: string, headLines = 5, tailLines = 5): OutputExcerpt {
  const lines = output.replace(/\r\n?/g, '\n').split('\n');
  while (lines.length > 0 && lines[lines.length - 1]?.trim() === '') lines.pop();
  while (lines.length > 0 && lines[0]?.trim() === '') lines.shift();
  const cut = (l: string): string => (l.length > MAX_LINE ? `${l.slice(0, MAX_LINE - 1)}…` : l);
  if (lines.length <= headLines + tailLines) return { head: lines.map(cut), tail: [], omittedLines: 0 };
  return {
    head: lines.slice(0, headLines).map(cut),
    tail: lines.slice(lines.length - tailLines).map(cut),
    omittedLines: lines.length - headLines - tailLines,
  };
}
