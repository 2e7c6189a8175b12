import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import { specPathFor } from './spec-paths';

type Json = Record<string, unknown>;

interface Operation {
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema?: unknown }> }>;
}

interface Subset {
  paths: Record<string, Record<string, Operation | unknown>>;
  components: { schemas: Json; responses: Record<string, Json>; headers: Json };
}

export interface ContractFailure {
  method: string;
  path: string;
  status: number;
  part: 'route' | 'request' | 'response';
  problem: string;
}

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Discord's published OpenAPI description (the committed subset) as a validator of what the local
 * Discord answers and what its clients send: the operation is found by route, the response schema
 * by status (exact, then `4XX`), and checked with a JSON Schema 2020-12 validator.
 */
export class DiscordContract {
  private readonly subset: Subset;
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(file = join(__dirname, 'discord-openapi.subset.json')) {
    this.subset = applyErrata(JSON.parse(readFileSync(file, 'utf8')) as Subset);
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    this.ajv.addFormat('int32', {
      type: 'number',
      validate: (n: number) => Number.isInteger(n) && n >= INT32.min && n <= INT32.max,
    });
    this.ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
    this.ajv.addFormat('double', { type: 'number', validate: (n: number) => Number.isFinite(n) });
    this.ajv.addFormat('snowflake', /^(0|[1-9][0-9]*)$/);
    this.ajv.addFormat('nonce', () => true);
    this.ajv.addFormat('date-time', (s: string) => DATE_TIME.test(s) && !Number.isNaN(Date.parse(s)));
    this.ajv.addFormat('uri', (s: string) => URL.canParse(s));
    this.ajv.addSchema({ $id: 'discord', components: this.subset.components });
  }

  /** Spec paths for the local Discord's route templates; null where the description has none. */
  specPath(template: string): string | null {
    return specPathFor(template, Object.keys(this.subset.paths));
  }

  private operation(method: string, template: string): { path: string; op: Operation } | null {
    const path = this.specPath(template);
    const op = path ? this.subset.paths[path]?.[method.toLowerCase()] : undefined;
    return path && op ? { path, op: op as Operation } : null;
  }

  /** Problems with one exchange; empty when request and response agree with Discord's description. */
  check(exchange: {
    method: string;
    template: string;
    status: number;
    requestBody: unknown;
    requestContentType: string | null;
    responseBody: unknown;
  }): ContractFailure[] {
    const { method, template, status } = exchange;
    const fail = (part: ContractFailure['part'], problem: string): ContractFailure => ({
      method,
      path: template,
      status,
      part,
      problem,
    });
    const found = this.operation(method, template);
    if (!found) return [fail('route', 'Discord has no such operation')];
    const failures: ContractFailure[] = [];

    if (exchange.requestBody !== null && exchange.requestBody !== undefined && status < 500) {
      const type = exchange.requestContentType ?? 'application/json';
      const schema = found.op.requestBody?.content?.[type]?.schema;
      if (!found.op.requestBody) failures.push(fail('request', 'the operation takes no body'));
      else if (!schema) failures.push(fail('request', `the operation takes no ${type} body`));
      else {
        // The stand-in records a multipart body as its payload_json plus a list of the files.
        const body =
          type === 'multipart/form-data'
            ? Object.fromEntries(Object.entries(exchange.requestBody as Json).filter(([k]) => k !== 'files'))
            : exchange.requestBody;
        const problem = this.validate(`${found.path} ${method} request ${type}`, schema, body);
        if (problem) failures.push(fail('request', problem));
      }
    }

    const responses = found.op.responses;
    const declared = responses[String(status)] ?? responses[`${String(status)[0]}XX`];
    if (!declared) {
      failures.push(fail('response', `status ${status} is not a documented answer`));
      return failures;
    }
    const resolved = declared.$ref
      ? this.subset.components.responses[declared.$ref.replace('#/components/responses/', '')]
      : declared;
    const schema = (resolved?.content as Record<string, { schema?: unknown }> | undefined)?.[
      'application/json'
    ]?.schema;
    if (!schema) {
      if (
        exchange.responseBody !== undefined &&
        exchange.responseBody !== null &&
        exchange.responseBody !== ''
      )
        failures.push(fail('response', `status ${status} has no body in Discord's description`));
      return failures;
    }
    const problem = this.validate(`${found.path} ${method} ${status}`, schema, exchange.responseBody);
    if (problem) failures.push(fail('response', problem));
    return failures;
  }

  private validate(key: string, schema: unknown, value: unknown): string | null {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(
        JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"discord#/components/')) as Json,
      );
      this.compiled.set(key, validate);
    }
    if (validate(value)) return null;
    return (validate.errors ?? [])
      .slice(0, 5)
      .map(
        (e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
      )
      .join('; ');
  }
}

/**
 * Where the description contradicts Discord's own documentation and answers, the documented
 * behaviour wins, and each such place is listed here (and nowhere else):
 *
 * - A field error in `errors` (`{ content: { _errors: [{ code, message }] } }`) carries a string
 *   code such as `BASE_TYPE_MAX_LENGTH` (developer docs, "Error Messages" example; discord.js
 *   prints it as such); the description reuses its integer `Error` object for it.
 * - `allow` and `deny` of `PUT /channels/{id}/permissions/{overwrite_id}` are permission strings:
 *   "In API v8 and above, all permissions are serialized as strings, including the allow and deny
 *   fields in overwrites" (developer docs, "Permissions"), and discord.js sends strings; the
 *   description types them as integers only.
 */
function applyErrata(subset: Subset): Subset {
  const overwrite = subset.paths['/channels/{channel_id}/permissions/{overwrite_id}']?.put as
    Operation | undefined;
  const props = (
    overwrite?.requestBody?.content?.['application/json']?.schema as
      { properties?: Record<string, unknown> } | undefined
  )?.properties;
  if (props) {
    for (const field of ['allow', 'deny'])
      props[field] = {
        oneOf: [{ type: 'null' }, { type: 'integer' }, { type: 'string', pattern: '^[0-9]+$' }],
      };
  }
  const inner = subset.components.schemas.InnerErrors as
    { properties?: { _errors?: { items?: unknown } } } | undefined;
  if (inner?.properties?._errors) {
    inner.properties._errors.items = {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
      required: ['code', 'message'],
    };
  }
  return subset;
}
