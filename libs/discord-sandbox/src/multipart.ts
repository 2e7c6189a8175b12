/** One part of a multipart/form-data body. */
export interface FormPart {
  name: string;
  filename: string | null;
  contentType: string | null;
  data: Buffer;
}

/**
 * Minimal multipart/form-data reader: discord.js switches to multipart (a `payload_json` part plus
 * `files[n]`) as soon as a message carries files.
 */
export function parseMultipart(body: Buffer, contentType: string): FormPart[] {
  const boundaryMatch = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const boundary = boundaryMatch?.[1] ?? boundaryMatch?.[2];
  if (!boundary) throw new Error('multipart body without boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const afterDelimiter = start + delimiter.length;
    if (body.subarray(afterDelimiter, afterDelimiter + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, afterDelimiter);
    if (next < 0) break;
    const chunk = body.subarray(afterDelimiter + 2, next - 2); // strip the CRLF after the delimiter and before the next
    const headerEnd = chunk.indexOf('\r\n\r\n');
    if (headerEnd >= 0) {
      const headers = chunk.subarray(0, headerEnd).toString('utf8');
      const disposition = /content-disposition:[^\r\n]*/i.exec(headers)?.[0] ?? '';
      const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
      const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1] ?? null;
      const partType = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim() ?? null;
      if (name !== undefined)
        parts.push({
          name,
          filename,
          contentType: partType,
          data: Buffer.from(chunk.subarray(headerEnd + 4)),
        });
    }
    start = next;
  }
  return parts;
}
