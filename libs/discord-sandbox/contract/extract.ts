/**
 * Cuts Discord's OpenAPI description down to what the local Discord serves: the operations of its
 * REST routes (request body, responses) and every schema, response and header they reference.
 * The result is committed as discord-openapi.subset.json beside this file, with the MIT notice the
 * description is published under.
 *
 *   node -r @swc-node/register libs/discord-sandbox/contract/extract.ts <openapi.json> <source commit>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalDiscord } from '../src/local-discord';
import { defaultSeed } from '../src/seed';
import { specPathFor } from './spec-paths';

type Json = Record<string, unknown>;

async function main(): Promise<void> {
  const [specFile, commit] = process.argv.slice(2);
  if (!specFile || !commit) throw new Error('usage: extract.ts <openapi.json> <source commit>');
  const spec = JSON.parse(readFileSync(specFile, 'utf8')) as {
    openapi: string;
    info: Json;
    paths: Record<string, Record<string, Json>>;
    components: Record<string, Record<string, unknown>>;
  };
  const discord = await LocalDiscord.start(defaultSeed());
  const routes = discord.restRoutes();
  await discord.close();

  const paths: Record<string, Record<string, Json>> = {};
  for (const { method, template } of routes) {
    const specPath = specPathFor(template, Object.keys(spec.paths));
    if (!specPath) continue; // The contract test reports a route the description lacks.
    const item = spec.paths[specPath] as Record<string, Json>;
    const op = item[method.toLowerCase()];
    if (!op) continue;
    paths[specPath] = {
      ...(paths[specPath] ?? {}),
      ...(item.parameters ? { parameters: item.parameters as Json } : {}),
      [method.toLowerCase()]: op,
    };
  }

  // The closure of every `$ref` reachable from the kept operations.
  const keep: Record<string, Set<string>> = { schemas: new Set(), responses: new Set(), headers: new Set() };
  const queue: unknown[] = [paths];
  while (queue.length > 0) {
    const node = queue.pop();
    if (Array.isArray(node)) queue.push(...node);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') {
          const m = /^#\/components\/(schemas|responses|headers)\/(.+)$/.exec(v);
          if (!m) throw new Error(`unexpected $ref ${v}`);
          const [, kind, name] = m as unknown as [string, string, string];
          if (!keep[kind]?.has(name)) {
            keep[kind]?.add(name);
            queue.push(spec.components[kind]?.[name]);
          }
        } else queue.push(v);
      }
    }
  }
  const pick = (kind: string) =>
    Object.fromEntries([...(keep[kind] ?? [])].sort().map((n) => [n, spec.components[kind]?.[n]]));

  const licence = readFileSync(join(__dirname, 'LICENSE'), 'utf8');
  const subset = {
    openapi: spec.openapi,
    info: spec.info,
    'x-source': {
      repository: 'https://github.com/discord/discord-api-spec',
      file: 'specs/openapi.json',
      commit,
      note: 'A subset: only the operations the local Discord serves and what they reference.',
    },
    'x-licence': licence,
    paths,
    components: {
      schemas: pick('schemas'),
      responses: pick('responses'),
      headers: pick('headers'),
      securitySchemes: spec.components.securitySchemes,
    },
  };
  writeFileSync(join(__dirname, 'discord-openapi.subset.json'), `${JSON.stringify(subset, null, 1)}\n`);
  process.stdout.write(
    `${Object.keys(paths).length} paths, ${keep.schemas?.size} schemas, ${keep.responses?.size} responses\n`,
  );
}

void main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(1);
});
