import type { OutputExcerpt } from '@caseloop/contracts';

const MAX_LINE = 300;

/**
 * Terminal control sequences: colours and cursor moves (CSI) and hyperlinks or titles (OSC). Test
 * runners and bundlers colour their output even under CI=true (vitest, vite); in a receipt or on
 * the case page the escape is dropped and `[2m…[22m` is left in the text.
 */
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROL = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g;

/**
 * The first and last lines of a (redacted) check output: enough to see how a long suite started and
 * how it ended on the case page and in the receipt; the whole log is one link away. Terminal colours are taken
 * out (the stored log keeps them). Blank lines at either end say nothing and are dropped; each line
 * is cut to what the event allows.
 */
export function excerptOf(output: string, headLines = 5, tailLines = 5): OutputExcerpt {
  const lines = output.replace(TERMINAL_CONTROL, '').replace(/\r\n?/g, '\n').split('\n');
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
