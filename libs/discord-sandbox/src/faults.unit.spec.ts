import { FaultInjector, RateLimiter } from './faults';

describe('FaultInjector', () => {
  it('matches method, exact paths, :param templates and regexes, for a number of times', () => {
    const faults = new FaultInjector();
    faults.add({ method: 'POST', path: '/channels/:c/messages', status: 502, times: 2 });
    faults.add({ path: /\/reactions\//, status: 429 });
    faults.add({ path: '/users/@me', status: 500 });
    expect(faults.take('GET', '/channels/1/messages')).toBeNull();
    expect(faults.take('POST', '/channels/1/messages')?.status).toBe(502);
    expect(faults.take('POST', '/channels/2/messages')?.status).toBe(502);
    expect(faults.take('POST', '/channels/2/messages')).toBeNull();
    expect(faults.take('PUT', '/channels/1/messages/2/reactions/%F0%9F%91%80/@me')?.status).toBe(429);
    expect(faults.take('GET', '/users/@me/guilds')).toBeNull();
    expect(faults.take('GET', '/users/@me')?.status).toBe(500);
  });
});

describe('RateLimiter', () => {
  it('counts per route and major parameter in fixed windows', () => {
    let now = 0;
    const limiter = new RateLimiter({ limit: 2, windowMs: 1000 }, () => now);
    expect(limiter.consume('POST', '/channels/:c/messages', 'a')).toMatchObject({
      remaining: 1,
      exceeded: false,
      resetAfterMs: 1000,
    });
    expect(limiter.consume('POST', '/channels/:c/messages', 'b').remaining).toBe(1);
    expect(limiter.consume('POST', '/channels/:c/messages', 'a')).toMatchObject({
      remaining: 0,
      exceeded: false,
    });
    now = 400;
    expect(limiter.consume('POST', '/channels/:c/messages', 'a')).toMatchObject({
      remaining: 0,
      exceeded: true,
      resetAfterMs: 600,
    });
    now = 1000;
    expect(limiter.consume('POST', '/channels/:c/messages', 'a')).toMatchObject({
      remaining: 1,
      exceeded: false,
    });
  });
});
