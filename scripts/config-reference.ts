// Prints the configuration reference (every key of every service, from the schemas themselves).
import { configTable, describeConfig, SERVICE_CONFIGS } from '@caseloop/config-reference';
import { platformConfigShape } from '@caseloop/platform';

const platform = new Set(Object.keys(platformConfigShape));
const out: string[] = [];
const first = describeConfig(SERVICE_CONFIGS.intake as never).filter((r) => platform.has(r.key));
out.push('### Every service', '', configTable(first), '');
for (const [name, def] of Object.entries(SERVICE_CONFIGS)) {
  const rows = describeConfig(def).filter((r) => !platform.has(r.key));
  out.push(`### ${name}`, '', rows.length ? configTable(rows) : '(only the keys every service reads)', '');
}
process.stdout.write(out.join('\n'));
