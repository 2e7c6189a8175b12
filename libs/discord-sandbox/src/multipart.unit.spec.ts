import { parseMultipart } from './multipart';

describe('parseMultipart', () => {
  it('reads payload_json and file parts byte for byte', () => {
    const file = Buffer.from([0, 1, 2, 13, 10, 45, 45, 255]);
    const body = Buffer.concat([
      Buffer.from(
        '--XyZ\r\nContent-Disposition: form-data; name="payload_json"\r\nContent-Type: application/json\r\n\r\n{"content":"hi"}\r\n',
      ),
      Buffer.from(
        '--XyZ\r\nContent-Disposition: form-data; name="files[0]"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n',
      ),
      file,
      Buffer.from('\r\n--XyZ--\r\n'),
    ]);
    const parts = parseMultipart(body, 'multipart/form-data; boundary=XyZ');
    expect(parts.map((p) => [p.name, p.filename, p.contentType])).toEqual([
      ['payload_json', null, 'application/json'],
      ['files[0]', 'a.bin', 'application/octet-stream'],
    ]);
    expect(parts[0]?.data.toString()).toBe('{"content":"hi"}');
    expect(parts[1]?.data.equals(file)).toBe(true);
  });
});
