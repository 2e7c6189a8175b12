/**
 * Splits a reply into Discord-sized chunks: at paragraph boundaries when possible, then at
 * line boundaries, then hard. Pure and deterministic, so a retried delivery produces the same
 * chunks (and therefore the same nonces).
 */
export function splitIntoChunks(content: string, limit: number): string[] {
  if (limit < 1) throw new RangeError('chunk limit must be positive');
  const text = content.replace(/\r\n/g, '\n').trim();
  if (text === '') return [];
  const chunks: string[] = [];
  let current = '';
  const push = () => {
    const c = current.trim();
    if (c) chunks.push(c);
    current = '';
  };
  const add = (piece: string, sep: string) => {
    if (current === '') current = piece;
    else if (current.length + sep.length + piece.length <= limit) current += sep + piece;
    else {
      push();
      current = piece;
    }
  };
  for (const para of text.split(/\n{2,}/)) {
    if (para.length <= limit) {
      add(para, '\n\n');
      continue;
    }
    push();
    for (const line of para.split('\n')) {
      if (line.length <= limit) {
        add(line, '\n');
        continue;
      }
      push();
      let i = 0;
      while (i < line.length) {
        let end = Math.min(i + limit, line.length);
        // never cut a surrogate pair in half
        if (end < line.length && /[\uDC00-\uDFFF]/.test(line.charAt(end))) end -= 1;
        current = line.slice(i, end);
        i = end;
        if (i < line.length) push();
      }
    }
    push();
  }
  push();
  return chunks;
}
