import { z } from 'zod';
import {
  ConfigError,
  defineConfig,
  parseConfig,
  platformConfigShape,
  platformSecrets,
  redactConfig,
} from './config';

const def = defineConfig({
  schema: z.object({
    ...platformConfigShape,
    API_TOKEN: z.string().min(12),
    RETRIES: z.coerce.number().int().max(5),
  }),
  secrets: [...platformSecrets, 'API_TOKEN'],
});

describe('parseConfig', () => {
  it('applies defaults and coerces', () => {
    const c = parseConfig(def, { API_TOKEN: 'a-long-token-value', RETRIES: '3' });
    expect(c).toMatchObject({
      CASELOOP_NAMESPACE: 'caseloop',
      LEDGER_STREAM: 'CASE_LEDGER',
      HTTP_PORT: 3000,
      RETRIES: 3,
      LEDGER_PROVISION: false,
    });
  });

  it('names every bad key and never a value', () => {
    const secret = 'short-secret';
    let err: unknown;
    try {
      parseConfig(def, {
        API_TOKEN: 'tiny',
        RETRIES: '99',
        NATS_PASSWORD: secret,
        HTTP_PORT: 'eighty',
        LOG_LEVEL: secret,
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as ConfigError;
    expect(e.keys.sort()).toEqual(['API_TOKEN', 'HTTP_PORT', 'LOG_LEVEL', 'RETRIES']);
    expect(e.message).not.toContain('tiny');
    expect(e.message).not.toContain(secret);
    expect(e.message).not.toContain('eighty');
  });

  it('reports a missing required key as required', () => {
    expect(() => parseConfig(def, {})).toThrow(/API_TOKEN: required/);
  });

  it('refuses a secret given both inline and as a file', () => {
    expect(() => parseConfig(def, { API_TOKEN: 'a-long-token-value', API_TOKEN_FILE: '/nowhere' })).toThrow(
      /API_TOKEN: set either API_TOKEN or API_TOKEN_FILE/,
    );
  });

  it('redacts secrets for logging', () => {
    const c = parseConfig(def, { API_TOKEN: 'a-long-token-value', NATS_PASSWORD: 'pw', RETRIES: '1' });
    const shown = JSON.stringify(redactConfig(c, def.secrets));
    expect(shown).not.toContain('a-long-token-value');
    expect(shown).not.toContain('"pw"');
    expect(shown).toContain('"API_TOKEN":"[redacted]"');
  });
});
