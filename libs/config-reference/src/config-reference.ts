import type { ConfigDefinition } from '@caseloop/platform';
import { z } from 'zod';

export interface ConfigKey {
  key: string;
  required: boolean;
  default: string | null;
  secret: boolean;
  type: string;
}

/** Reads a service's config schema back into rows: what the README and the compose test check against. */
export function describeConfig(def: ConfigDefinition): ConfigKey[] {
  const secrets = new Set<string>(def.secrets);
  return Object.entries(def.schema.shape).map(([key, schema]) => {
    const s = schema as z.ZodType;
    const json = safeJsonSchema(s);
    const dflt = defaultOf(s);
    return {
      key,
      required: !s.safeParse(undefined).success,
      default: dflt === undefined ? null : JSON.stringify(dflt),
      secret: secrets.has(key),
      type: typeOf(json),
    };
  });
}

function defaultOf(s: z.ZodType): unknown {
  const r = s.safeParse(undefined);
  return r.success ? r.data : undefined;
}

function safeJsonSchema(s: z.ZodType): Record<string, unknown> {
  try {
    return z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function typeOf(json: Record<string, unknown>): string {
  if (Array.isArray(json.enum)) return (json.enum as unknown[]).map(String).join(' \\| ');
  if (typeof json.type === 'string') return json.type;
  if (Array.isArray(json.anyOf)) return 'string';
  return 'string';
}

/** A markdown table for one service. Secrets say so: they may also come from `<KEY>_FILE`. */
export function configTable(rows: ConfigKey[]): string {
  const lines = ['| key | default | notes |', '|---|---|---|'];
  for (const r of rows) {
    const notes = [
      r.required ? '**required**' : '',
      r.secret ? 'secret (or `' + r.key + '_FILE`)' : '',
      r.type !== 'string' ? r.type : '',
    ]
      .filter(Boolean)
      .join('; ');
    const dflt = r.default === null ? '' : '`' + r.default.replace(/\|/g, '\\|') + '`';
    lines.push(`| \`${r.key}\` | ${dflt} | ${notes} |`);
  }
  return lines.join('\n');
}

/** The whole reference: the keys every service reads, then each service's own. */
export function renderConfigReference(
  configs: Record<string, ConfigDefinition>,
  platformKeys: readonly string[],
): string {
  const platform = new Set(platformKeys);
  const [firstName] = Object.keys(configs);
  const out: string[] = [];
  const first = firstName
    ? describeConfig(configs[firstName] as ConfigDefinition).filter((r) => platform.has(r.key))
    : [];
  out.push('### Every service', '', configTable(first), '');
  for (const [name, def] of Object.entries(configs)) {
    const rows = describeConfig(def).filter((r) => !platform.has(r.key));
    out.push(`### ${name}`, '', rows.length ? configTable(rows) : '(only the keys every service reads)', '');
  }
  return out.join('\n').trim();
}
