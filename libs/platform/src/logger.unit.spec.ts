import { Writable } from 'node:stream';
import { createLogger } from './logger';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, destination };
}

describe('logger', () => {
  it('redacts secrets at the depths structured logs use, including service secret keys', () => {
    const { lines, destination } = capture();
    const log = createLogger({ name: 't', secretKeys: ['DISCORD_TOKEN'], destination });
    log.info(
      {
        password: 'p1',
        nats: { pass: 'p2' },
        req: { headers: { authorization: 'Bearer p3' } },
        config: { DISCORD_TOKEN: 'p4' },
        keep: 'visible',
      },
      'hello',
    );
    const out = lines.join('');
    for (const s of ['p1', 'p2', 'Bearer p3', 'p4']) expect(out).not.toContain(s);
    expect(out).toContain('visible');
    expect(out).toContain('[redacted]');
  });
});
