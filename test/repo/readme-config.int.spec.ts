import { describeConfig, renderConfigReference } from '@caseloop/config-reference';
import { platformConfigShape } from '@caseloop/platform';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_CONFIGS } from '../../scripts/service-configs';

const README = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');

describe("the README's configuration reference", () => {
  it('is exactly what the services config schemas say (regenerate with scripts/config-reference.ts)', () => {
    const section = /<!-- config-reference:start -->\n([\s\S]*?)\n<!-- config-reference:end -->/.exec(
      README,
    )?.[1];
    expect(section?.trim()).toBe(renderConfigReference(SERVICE_CONFIGS, Object.keys(platformConfigShape)));
  });

  it('names every key of every service, secrets marked as such', () => {
    for (const def of Object.values(SERVICE_CONFIGS)) {
      for (const row of describeConfig(def)) {
        expect(README).toContain(`\`${row.key}\``);
        if (row.secret) expect(README).toContain(`\`${row.key}_FILE\``);
      }
    }
  });
});
