import { parse as parseYaml } from 'yaml';
import { CheckSpec, ClientSpec, SetupStep } from './repository.schema';

/**
 * What `caseloop repo init` reads of a repository to propose its entry: the package manager and
 * its lockfile, the Node version it asks for, its scripts (lint, typecheck, test, build, a dev or
 * preview server) and its page; without package.json, its Makefile's targets and what a Python
 * project or a Go module gives. Pure: it sees the repository only through `files`.
 */
export interface RepositoryFiles {
  /** The text of a file at the repository root (or below), or null when it does not exist. */
  read(path: string): string | null;
  /** The directories directly in a directory of the repository (for workspaces like `apps/*`). */
  list?(dir: string): string[];
}

export type PackageManager = 'npm' | 'pnpm' | 'yarn';

export interface Inspection {
  id: string;
  packageManager: PackageManager | null;
  lockfile: string | null;
  /** What the repository asks for (`engines.node`, `.nvmrc`, `.node-version`). */
  node: { wanted: string; from: string } | null;
  setup: SetupStep[];
  checks: CheckSpec[];
  client: (Omit<ClientSpec, 'flow'> & { how: string }) | null;
  /** The page's `<title>`, when a static `index.html` has one: the starter flow's capture names it. */
  title: string | null;
  /** Things the operator must look at, each one line. */
  notes: string[];
  /** Scripts seen but not made into checks, with why. */
  skipped: string[];
}

interface PackageJson {
  name?: unknown;
  packageManager?: unknown;
  engines?: { node?: unknown };
  scripts?: Record<string, unknown>;
  dependencies?: Record<string, unknown>;
  devDependencies?: Record<string, unknown>;
  workspaces?: unknown;
}

const MINUTE = 60_000;

/** A repository id from a package name or a directory: `@acme/web-app` → `acme-web-app`. */
export function repositoryIdFrom(name: string): string {
  const id = name
    .toLowerCase()
    .replace(/^@/, '')
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
    .slice(0, 64);
  return id || 'repository';
}

/** The package manager a repository uses: `packageManager` first, then its lockfile. */
export function detectPackageManager(
  pkg: PackageJson,
  files: RepositoryFiles,
): { manager: PackageManager | null; lockfile: string | null; version: string | null } {
  const declared = typeof pkg.packageManager === 'string' ? pkg.packageManager : '';
  const m = /^(npm|pnpm|yarn)@([^+\s]+)/.exec(declared);
  const locks: [string, PackageManager][] = [
    ['pnpm-lock.yaml', 'pnpm'],
    ['yarn.lock', 'yarn'],
    ['package-lock.json', 'npm'],
    ['npm-shrinkwrap.json', 'npm'],
  ];
  const found = locks.find(([f]) => files.read(f) !== null);
  if (m) {
    const manager = m[1] as PackageManager;
    const lock = locks.find(([f, pm]) => pm === manager && files.read(f) !== null);
    return { manager, lockfile: lock?.[0] ?? null, version: m[2] ?? null };
  }
  if (found) return { manager: found[1], lockfile: found[0], version: null };
  return { manager: null, lockfile: null, version: null };
}

/**
 * The package manager as corepack is asked for it. With `packageManager` in package.json corepack
 * uses that exact version; without it, the major version the lockfile was written by (corepack
 * would otherwise take the latest release, which may refuse an older lockfile).
 */
export function pinnedManager(pm: PackageManager, declared: string | null, lockfile: string | null): string {
  if (pm === 'npm' || declared) return pm;
  if (pm === 'pnpm' && lockfile) {
    const v = /lockfileVersion:\s*'?(\d+)\.(\d+)/.exec(lockfile);
    const major = v ? Number(v[1]) : NaN;
    const minor = v ? Number(v[2]) : NaN;
    if (major >= 9) return 'pnpm@9';
    if (major === 6) return 'pnpm@8';
    if (major === 5) return minor >= 4 ? 'pnpm@7' : 'pnpm@6';
  }
  if (pm === 'yarn' && lockfile) return /__metadata:/.test(lockfile) ? 'yarn@stable' : 'yarn@1';
  return pm;
}

/** How a script is run with this package manager (pnpm and yarn through corepack: nothing global). */
export function runScript(
  pm: PackageManager,
  script: string,
  extra: string[] = [],
  as: string = pm,
): string[] {
  const rest = extra.length ? ['--', ...extra] : [];
  if (pm === 'npm') return ['npm', 'run', '--silent', script, ...rest];
  return ['corepack', as, 'run', script, ...(extra.length ? extra : [])];
}

function installStep(
  pm: PackageManager,
  as: string,
  lockfile: string | null,
  yarnBerry: boolean,
  files: RepositoryFiles,
  workspaces: string[],
): SetupStep {
  const command =
    pm === 'npm'
      ? lockfile
        ? ['npm', 'ci', '--no-audit', '--no-fund']
        : ['npm', 'install', '--no-audit', '--no-fund']
      : pm === 'pnpm'
        ? ['corepack', as, 'install', '--frozen-lockfile']
        : yarnBerry
          ? ['corepack', as, 'install', '--immutable']
          : ['corepack', as, 'install', '--frozen-lockfile', '--non-interactive'];
  const inputs = ['package.json', ...(lockfile ? [lockfile] : [])];
  for (const extra of ['.npmrc', 'pnpm-workspace.yaml', '.yarnrc.yml'])
    if (files.read(extra) !== null) inputs.push(extra);
  // What is installed depends on every workspace's package.json too (a dependency added to
  // apps/web must install again, above all without a lockfile); the schema takes up to 50 inputs.
  for (const dir of workspaces)
    if (inputs.length < 50 && files.read(`${dir}/package.json`) !== null) inputs.push(`${dir}/package.json`);
  return { name: 'install', command, timeoutMs: 15 * MINUTE, inputs };
}

/** Scripts by the kind of check they are, in the order checks run (cheap first). */
const KINDS: { kind: CheckSpec['kind']; scripts: string[]; timeoutMs: number }[] = [
  {
    kind: 'format',
    scripts: ['format:check', 'check:format', 'prettier:check', 'fmt:check', 'lint:format'],
    timeoutMs: 5 * MINUTE,
  },
  {
    kind: 'lint',
    scripts: ['lint', 'test:lint', 'lint:js', 'check:lint', 'lint:check'],
    timeoutMs: 10 * MINUTE,
  },
  {
    kind: 'typecheck',
    scripts: [
      'typecheck',
      'type-check',
      'check-types',
      'types',
      'tsc',
      'lint:types',
      'test:types',
      'check:type',
      'check:types',
      'types:check',
    ],
    timeoutMs: 10 * MINUTE,
  },
  { kind: 'focused_test', scripts: ['test:focused', 'test:unit', 'unit'], timeoutMs: 20 * MINUTE },
  { kind: 'regression_test', scripts: ['test:regression', 'test'], timeoutMs: 30 * MINUTE },
  { kind: 'build', scripts: ['build'], timeoutMs: 15 * MINUTE },
];

/**
 * A typecheck under a general name (`"check": "svelte-check && tsc -p tsconfig.node.json"`, as
 * Svelte's and Vue's templates write it): read by what it runs, when no script is named for it.
 */
const TYPECHECK_BY_BODY = {
  scripts: ['check', 'verify', 'validate'],
  runs: /\b(tsc|svelte-check|vue-tsc)\b/,
};

/** npm's placeholder test script: not a check. */
const NO_TEST = /no test specified/;
/** Scripts that watch or serve never finish: not checks. */
const LONG_RUNNING = /\b(--watch|-w\b|watch\b|serve\b|dev\b|start\b|storybook\b)/;

/** Scripts that run an end-to-end suite in a browser: it needs that browser and a served app. */
const E2E_RUNNERS: [RegExp, string][] = [
  [/\bcypress\s+(run|open)\b/, 'Cypress'],
  [/\bplaywright\s+test\b/, 'Playwright'],
  [/\b(wdio|testcafe|nightwatch)\b/, 'an end-to-end runner'],
];
/** A linter or formatter told to rewrite what it finds instead of failing on it. */
const WRITES = /(?:^|\s)(--fix|--write)(?=\s|$)/;

/**
 * A script's own text and, followed, the scripts it runs (`npm run a && npm run b`, `pnpm a`,
 * `yarn a`): what a check named after one script really does. Each script is read once.
 */
export function scriptChain(
  scripts: Record<string, string>,
  name: string,
  seen: Set<string> = new Set(),
): { script: string; body: string }[] {
  const body = scripts[name];
  if (body === undefined || seen.has(name)) return [];
  seen.add(name);
  const out = [{ script: name, body }];
  const calls = /\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:(?:--silent|-s)\s+)?([A-Za-z0-9:_.-]+)/g;
  for (const m of body.matchAll(calls)) {
    const called = m[1] as string;
    if (scripts[called] !== undefined) out.push(...scriptChain(scripts, called, seen));
  }
  return out;
}

/** What an operator should know about a proposed check before a case depends on it. */
function checkCaveats(check: CheckSpec, script: string, scripts: Record<string, string>): string[] {
  const chain = scriptChain(scripts, script);
  const notes: string[] = [];
  for (const [runs, what] of E2E_RUNNERS) {
    const hit = chain.find((s) => runs.test(s.body));
    if (!hit) continue;
    const via = hit.script === script ? '' : ` (through "${hit.script}")`;
    notes.push(
      `check ${check.name} runs an end-to-end suite with ${what}${via}: it needs that browser and the app served where the checks run, or it fails on every case; if they are not there, point the check at a script without it`,
    );
    break;
  }
  const bun = chain.find((s) => /(^|[\s;&|(])(bun|bunx)\s/.test(s.body));
  if (bun)
    notes.push(
      `check ${check.name} calls bun ("${bun.body.slice(0, 60)}"${bun.script === script ? '' : `, in "${bun.script}"`}), which caseloop does not install: it fails unless bun is on PATH where the checks run`,
    );
  if (check.kind === 'lint' || check.kind === 'format') {
    const hit = chain.find((s) => WRITES.test(s.body));
    if (hit)
      notes.push(
        `check ${check.name} runs "${hit.body.slice(0, 60)}": ${WRITES.exec(hit.body)?.[1]} rewrites what it can fix and passes, so it proves only what it cannot fix; the same command without it fails on the change instead`,
      );
  }
  return notes;
}

export function inspectRepository(files: RepositoryFiles, fallbackName: string): Inspection {
  const notes: string[] = [];
  const skipped: string[] = [];
  const text = files.read('package.json');
  let pkg: PackageJson = {};
  if (text !== null) {
    try {
      pkg = JSON.parse(text) as PackageJson;
    } catch {
      notes.push('package.json is not valid JSON: no scripts were read');
    }
  }
  const id = repositoryIdFrom(typeof pkg.name === 'string' ? pkg.name : fallbackName);
  const scripts = scriptsOf(pkg);

  const detected = detectPackageManager(pkg, files);
  const hasDeps =
    Object.keys(pkg.dependencies ?? {}).length + Object.keys(pkg.devDependencies ?? {}).length > 0 ||
    pkg.workspaces !== undefined;
  const pm: PackageManager | null = text === null ? null : (detected.manager ?? 'npm');
  const bunLock = ['bun.lock', 'bun.lockb'].find((f) => files.read(f) !== null) ?? null;
  if (bunLock && !detected.lockfile)
    notes.push(
      `a bun lockfile (${bunLock}) was found: bun is not set up here, so the entry installs with ${pm ?? 'npm'} without a lockfile; scripts that call bun or bunx need bun on PATH where the checks and the client run`,
    );
  const yarnBerry =
    pm === 'yarn' &&
    (files.read('.yarnrc.yml') !== null || (detected.version !== null && !detected.version.startsWith('1.')));
  const as = pm
    ? pinnedManager(pm, detected.version, detected.lockfile ? files.read(detected.lockfile) : null)
    : 'npm';
  if (pm === 'pnpm' || pm === 'yarn') {
    const which = detected.version
      ? `${pm}@${detected.version} ("packageManager" in package.json)`
      : as !== pm
        ? `${as} (the major the lockfile was written by; "packageManager" in package.json would pin it exactly)`
        : `the latest ${pm} (no "packageManager" in package.json and no lockfile to go by)`;
    notes.push(
      `${pm} runs through corepack, which downloads ${which} from the npm registry once into the shared cache`,
    );
  }
  const setup: SetupStep[] = [];
  if (pm && hasDeps) {
    setup.push(installStep(pm, as, detected.lockfile, yarnBerry, files, workspaceDirs(pkg, files)));
    if (!detected.lockfile && !bunLock)
      notes.push(
        'no lockfile: every install resolves versions anew, so a check can pass today and fail tomorrow',
      );
  }

  // A dev server at the root first; then one in a workspace (a monorepo's apps/web, whose root `dev`
  // only delegates to it: `turbo dev`, `pnpm --filter web dev`); then any root script or page.
  let client = clientOf(pm, as, scripts, pkg, files, true);
  let clientDir: string | null = null;
  if (!client && pm) {
    const apps: { dir: string; client: NonNullable<Inspection['client']> }[] = [];
    for (const dir of workspaceDirs(pkg, files)) {
      const sub = parseJson(files.read(`${dir}/package.json`));
      if (!sub) continue;
      const within: RepositoryFiles = { read: (p) => files.read(`${dir}/${p}`) };
      const found = clientOf(pm, as, scriptsOf(sub), sub, within, true);
      if (found) apps.push({ dir, client: found });
    }
    const first = apps[0];
    if (first) {
      clientDir = first.dir;
      client = { ...first.client, cwd: first.dir, how: `${first.client.how} (workspace ${first.dir})` };
      if (apps.length > 1)
        notes.push(
          `workspaces with a dev server: ${apps.map((a) => a.dir).join(', ')}; the client is ${first.dir}'s (client.cwd picks another)`,
        );
    }
  }
  client ??= clientOf(pm, as, scripts, pkg, files);
  const checks: CheckSpec[] = [];
  if (pm) {
    const found = checksOf(pm, as, scripts, skipped, null);
    // A monorepo's root may run nothing of the app's own (its build, its tests): those kinds come
    // from the client's workspace, run there.
    const inApp = clientDir
      ? checksOf(pm, as, workspaceScripts(files, clientDir), skipped, clientDir).filter(
          (w) => !found.some((f) => f.check.kind === w.check.kind),
        )
      : [];
    const all = [...found, ...inApp].sort(
      (a, b) =>
        KINDS.findIndex((k) => k.kind === a.check.kind) - KINDS.findIndex((k) => k.kind === b.check.kind),
    );
    for (const { check, script, scripts: from } of all) {
      checks.push(check);
      notes.push(...checkCaveats(check, script, from));
    }
    if (checks.length && !checks.some((c) => c.kind === 'focused_test'))
      notes.push(
        'no focused test: the one escalation to a stronger agent route is decided on a failing focused test, so consider a fast test script as kind focused_test',
      );
  }

  // Node: what the repository asks for, against what runs the checks here.
  const nvmrc = files.read('.nvmrc') ?? files.read('.node-version');
  const wanted =
    typeof pkg.engines?.node === 'string'
      ? { wanted: pkg.engines.node, from: 'engines.node' }
      : nvmrc
        ? { wanted: nvmrc.trim(), from: files.read('.nvmrc') !== null ? '.nvmrc' : '.node-version' }
        : null;

  // No package.json: the repository's own Makefile targets, then what Python's or Go's files say.
  if (text === null) {
    const other = otherToolchains(files, notes, skipped);
    setup.push(...other.setup);
    checks.push(...other.checks);
    client = other.client ?? client;
    if (!other.setup.length && !other.checks.length)
      notes.push(
        'no package.json, Makefile, pyproject.toml, requirements.txt or go.mod: no setup or checks could be proposed; add checks by hand',
      );
  }

  const html = files.read(clientDir ? `${clientDir}/index.html` : 'index.html');
  const title = html ? (/<title>([^<]{1,200})<\/title>/i.exec(html)?.[1]?.trim() ?? null) : null;
  if (!client) notes.push('no dev server, preview or start script and no index.html: no client was set up');

  return {
    id,
    packageManager: pm,
    lockfile: detected.lockfile,
    node: wanted,
    setup,
    checks,
    client,
    title,
    notes,
    skipped,
  };
}

/** The checks a package's scripts give, by kind; what is left out goes to `skipped`. */
function checksOf(
  pm: PackageManager,
  as: string,
  scripts: Record<string, string>,
  skipped: string[],
  cwd: string | null,
): { check: CheckSpec; script: string; scripts: Record<string, string> }[] {
  const where = cwd ? `${cwd}: ` : '';
  const out: { check: CheckSpec; script: string; scripts: Record<string, string> }[] = [];
  const used = new Set<string>();
  for (const k of KINDS) {
    const script =
      k.scripts.find((s) => scripts[s] !== undefined && !used.has(s)) ??
      (k.kind === 'typecheck'
        ? TYPECHECK_BY_BODY.scripts.find(
            (s) =>
              scripts[s] !== undefined && !used.has(s) && TYPECHECK_BY_BODY.runs.test(scripts[s] as string),
          )
        : undefined);
    if (!script) continue;
    const body = scripts[script] as string;
    used.add(script);
    if (NO_TEST.test(body)) {
      skipped.push(`${where}${script}: npm's placeholder ("no test specified")`);
      continue;
    }
    if (LONG_RUNNING.test(body) && !/\brun\b/.test(body)) {
      skipped.push(
        `${where}${script}: "${body.slice(0, 60)}" looks like it watches or serves and would never finish`,
      );
      continue;
    }
    const name = k.kind === 'focused_test' ? 'focused' : k.kind === 'regression_test' ? 'test' : k.kind;
    const check: CheckSpec = {
      name,
      kind: k.kind,
      command: runScript(pm, script, [], as),
      timeoutMs: k.timeoutMs,
      ...(cwd ? { cwd } : {}),
    };
    out.push({ check, script, scripts });
  }
  for (const s of Object.keys(scripts))
    if (!used.has(s) && /^(test|lint|check)/.test(s) && !/e2e|watch|coverage/.test(s))
      skipped.push(
        `${where}${s}: not one of the kinds caseloop runs by default; add it as kind "other" if it belongs`,
      );
  return out;
}

/** A package's scripts that are strings (a malformed entry is left out). */
function scriptsOf(pkg: PackageJson | null): Record<string, string> {
  return Object.fromEntries(
    Object.entries(pkg?.scripts ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
}

function workspaceScripts(files: RepositoryFiles, dir: string): Record<string, string> {
  return scriptsOf(parseJson(files.read(`${dir}/package.json`)));
}

function parseJson(text: string | null): PackageJson | null {
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' ? (v as PackageJson) : null;
  } catch {
    return null;
  }
}

/**
 * The workspace directories a repository declares (package.json `workspaces`, or `packages` in
 * pnpm-workspace.yaml): literal paths, and `dir/*` read through `files.list`. Deeper globs and
 * exclusions are left out.
 */
export function workspaceDirs(pkg: PackageJson, files: RepositoryFiles): string[] {
  const ws = pkg.workspaces;
  const patterns: unknown[] = Array.isArray(ws)
    ? ws
    : ws && typeof ws === 'object' && Array.isArray((ws as { packages?: unknown }).packages)
      ? ((ws as { packages: unknown[] }).packages ?? [])
      : [];
  const pnpm = files.read('pnpm-workspace.yaml');
  if (pnpm !== null) {
    try {
      const doc = parseYaml(pnpm) as { packages?: unknown } | null;
      if (Array.isArray(doc?.packages)) patterns.push(...doc.packages);
    } catch {
      // An unreadable workspace file proposes no workspace client; the root is still read.
    }
  }
  const dirs: string[] = [];
  for (const raw of patterns) {
    if (typeof raw !== 'string' || raw.startsWith('!')) continue;
    const p = raw.replace(/^\.\//, '').replace(/\/+$/, '');
    if (!p || p.includes('..')) continue;
    if (p.endsWith('/*') && !/[*?{[]/.test(p.slice(0, -2))) {
      const parent = p.slice(0, -2);
      for (const d of [...(files.list?.(parent) ?? [])].sort()) dirs.push(`${parent}/${d}`);
    } else if (!/[*?{[]/.test(p)) dirs.push(p);
  }
  return [...new Set(dirs)];
}

function clientOf(
  pm: PackageManager | null,
  as: string,
  scripts: Record<string, string>,
  pkg: PackageJson,
  files: RepositoryFiles,
  /** Only a dev server caseloop knows how to tell its port (Vite, Next.js, Astro, Nuxt). */
  frameworkOnly = false,
): Inspection['client'] {
  const deps = { ...(pkg.dependencies ?? {}), ...(pkg.devDependencies ?? {}) };
  const base = { readyPath: '/', fixtureData: true } as const;
  // Vite serves the app under its `base` (a GitHub Pages app: '/repo-name/') and redirects `/` there.
  const vite = viteBase(files);
  const underBase = vite ? { ...base, readyPath: vite.base } : base;
  const served = vite
    ? `; it serves under base ${vite.base} (${vite.file}), so readyPath and the flow start there`
    : '';
  if (pm) {
    for (const script of ['dev', 'start', 'serve', 'preview']) {
      const body = scripts[script];
      if (!body) continue;
      if (/\bvite\b/.test(body) && !/\bbuild\b/.test(body)) {
        const preview = /\bpreview\b/.test(body);
        return {
          ...underBase,
          start: runScript(pm, script, ['--host', '127.0.0.1', '--port', '{port}', '--strictPort'], as),
          url: `http://127.0.0.1:${preview ? 4173 : 5173}`,
          how: `the "${script}" script runs Vite; caseloop passes the port it picked as --port${served}`,
        };
      }
      if (/\bnext\b/.test(body) && /\b(dev|start)\b/.test(body)) {
        return {
          ...base,
          start: runScript(pm, script, ['--hostname', '127.0.0.1', '--port', '{port}'], as),
          url: 'http://127.0.0.1:3000',
          how: `the "${script}" script runs Next.js; caseloop passes the port it picked as --port`,
        };
      }
      if (/\b(astro|nuxt|nuxi)\b/.test(body)) {
        return {
          ...base,
          start: runScript(pm, script, ['--host', '127.0.0.1', '--port', '{port}'], as),
          url: 'http://127.0.0.1:4321',
          how: `the "${script}" script runs ${/astro/.test(body) ? 'Astro' : 'Nuxt'}; caseloop passes the port it picked as --port`,
        };
      }
      if (frameworkOnly) continue;
      return {
        ...base,
        start: runScript(pm, script, [], as),
        url: 'http://127.0.0.1:3000',
        how: `the "${script}" script must listen on $PORT (caseloop picks a free one); if it cannot be told, set client.port to the port it always uses`,
      };
    }
    if ('vite' in deps && files.read('index.html') !== null) {
      return {
        ...underBase,
        start: ['npx', '--no-install', 'vite', '--host', '127.0.0.1', '--port', '{port}', '--strictPort'],
        url: 'http://127.0.0.1:5173',
        how: `Vite is a dependency and index.html is at the root: the Vite dev server serves it${served}`,
      };
    }
  }
  if (!frameworkOnly && files.read('index.html') !== null) {
    return {
      ...base,
      start: ['python3', '-m', 'http.server', '{port}', '--bind', '127.0.0.1'],
      url: 'http://127.0.0.1:8000',
      how: 'a static page: any static server will do; this one needs python3 where the evidence service runs',
    };
  }
  return null;
}

/** `base: '/app/'` in the Vite config, when it is a literal path other than `/` (normalized to end in `/`). */
function viteBase(files: RepositoryFiles): { base: string; file: string } | null {
  for (const file of [
    'vite.config.ts',
    'vite.config.js',
    'vite.config.mts',
    'vite.config.mjs',
    'vite.config.cjs',
  ]) {
    const text = files.read(file);
    if (text === null) continue;
    const m = /(?:^|[\s{,])base\s*:\s*(['"`])(\/[^'"`$\s]*)\1/m.exec(text);
    const path = m?.[2];
    if (!path || path === '/') return null;
    return { base: path.endsWith('/') ? path : `${path}/`, file };
  }
  return null;
}

/** Makefile targets by the kind of check they are (first found wins), as `make <target>`. */
const MAKE_KINDS: { kind: CheckSpec['kind']; targets: string[]; timeoutMs: number }[] = [
  {
    kind: 'format',
    targets: ['format-check', 'check-format', 'fmt-check', 'check-fmt'],
    timeoutMs: 5 * MINUTE,
  },
  { kind: 'lint', targets: ['lint', 'check-lint', 'lint-check', 'vet'], timeoutMs: 10 * MINUTE },
  {
    kind: 'typecheck',
    targets: ['typecheck', 'type-check', 'check-types', 'types', 'mypy', 'pyright'],
    timeoutMs: 10 * MINUTE,
  },
  {
    kind: 'focused_test',
    targets: ['test-unit', 'unit-test', 'unit', 'test-focused'],
    timeoutMs: 20 * MINUTE,
  },
  { kind: 'regression_test', targets: ['test', 'tests', 'check'], timeoutMs: 30 * MINUTE },
  { kind: 'build', targets: ['build'], timeoutMs: 15 * MINUTE },
];
/** Targets that prepare a checkout (a virtualenv, dependencies). Never `install`: it usually installs the software itself. */
const MAKE_SETUP = ['init', 'setup', 'deps', 'bootstrap', 'venv', 'dev-setup', 'install-deps'];
/** Targets that serve the app. */
const MAKE_CLIENT = ['dev', 'run', 'serve', 'server', 'start', 'runserver'];
/** Files whose change means the dependencies must be installed again. */
const DEPENDENCY_FILES = [
  'requirements.txt',
  'requirements-dev.txt',
  'requirements-test.txt',
  'dev-requirements.txt',
  'pyproject.toml',
  'setup.py',
  'setup.cfg',
  'poetry.lock',
  'uv.lock',
  'Pipfile.lock',
  'go.mod',
  'go.sum',
];

/** The targets a Makefile defines (`name:` or `a b:` at the start of a line; not `x := y`, not `.PHONY`). */
export function makeTargets(makefile: string): string[] {
  const out: string[] = [];
  for (const m of makefile.matchAll(/^([A-Za-z0-9][\w.-]*(?:[ \t]+[A-Za-z0-9][\w.-]*)*)[ \t]*::?(?!=)/gm))
    for (const t of (m[1] as string).split(/[ \t]+/)) if (!out.includes(t)) out.push(t);
  return out;
}

/**
 * A repository without package.json: its Makefile's targets first (the commands its developers run),
 * then, for the kinds they leave out, what a Python project (a virtualenv, pytest, ruff) or a Go module
 * (go vet, go test, go build) gives.
 */
function otherToolchains(
  files: RepositoryFiles,
  notes: string[],
  skipped: string[],
): { setup: SetupStep[]; checks: CheckSpec[]; client: Inspection['client'] } {
  const setup: SetupStep[] = [];
  const checks: CheckSpec[] = [];
  let client: Inspection['client'] = null;
  const inputs = DEPENDENCY_FILES.filter((f) => files.read(f) !== null);
  const makefile = ['Makefile', 'makefile', 'GNUmakefile'].find((f) => files.read(f) !== null);
  const targets = makefile ? makeTargets(files.read(makefile) as string) : [];
  if (makefile) {
    const prepare = MAKE_SETUP.find((t) => targets.includes(t));
    if (prepare)
      setup.push({
        name: prepare,
        command: ['make', prepare],
        timeoutMs: 15 * MINUTE,
        inputs: [makefile, ...inputs],
      });
    for (const k of MAKE_KINDS) {
      const target = k.targets.find((t) => targets.includes(t));
      if (!target) continue;
      checks.push({
        name: k.kind === 'focused_test' ? 'focused' : k.kind === 'regression_test' ? 'test' : k.kind,
        kind: k.kind,
        command: ['make', target],
        timeoutMs: k.timeoutMs,
      });
    }
    const serve = MAKE_CLIENT.find((t) => targets.includes(t));
    if (serve)
      client = {
        start: ['make', serve],
        url: 'http://127.0.0.1:8000',
        readyPath: '/',
        fixtureData: true,
        how: `the Makefile's "${serve}" target must listen on $PORT (caseloop picks a free one); if it cannot be told, set client.port to the port it always uses`,
      };
    if (setup.length || checks.length || client)
      notes.push(`${makefile}: make must be on PATH where the checks and the client run`);
    if (targets.includes('install') && !prepare)
      skipped.push(
        `${makefile}: install: it may install the software itself; add it to setup if it only fetches dependencies`,
      );
  }
  const has = (kind: CheckSpec['kind']) => checks.some((c) => c.kind === kind);

  const pyproject = files.read('pyproject.toml');
  const requirements = [
    'requirements.txt',
    'requirements-dev.txt',
    'requirements-test.txt',
    'dev-requirements.txt',
  ].filter((f) => files.read(f) !== null);
  const python = pyproject !== null || requirements.length > 0 || files.read('setup.py') !== null;
  if (python) {
    const venv = ['.venv/bin/python', '-m'];
    if (!setup.length) {
      setup.push({
        name: 'venv',
        command: ['python3', '-m', 'venv', '.venv'],
        timeoutMs: 5 * MINUTE,
        inputs,
      });
      setup.push({
        name: 'install',
        command: requirements.length
          ? [...venv, 'pip', 'install', ...requirements.flatMap((r) => ['-r', r])]
          : [...venv, 'pip', 'install', '-e', '.'],
        timeoutMs: 15 * MINUTE,
        inputs,
      });
      if (!requirements.length)
        notes.push(
          'pip installs the project itself (-e .): test tools in an optional group need it named (-e ".[test]")',
        );
    }
    const all = [pyproject, ...requirements.map((r) => files.read(r)), files.read('setup.cfg')].join('\n');
    const ruff =
      files.read('ruff.toml') !== null ||
      files.read('.ruff.toml') !== null ||
      /\[tool\.ruff/.test(pyproject ?? '');
    if (ruff && !has('lint'))
      checks.push({
        name: 'lint',
        kind: 'lint',
        command: [...venv, 'ruff', 'check', '.'],
        timeoutMs: 10 * MINUTE,
      });
    const pytest =
      ['pytest.ini', 'pytest.toml', 'conftest.py', 'tests/conftest.py'].some((f) => files.read(f) !== null) ||
      /\[tool\.pytest|\[tool:pytest\]|\bpytest\b/i.test(all) ||
      /^\[pytest\]/m.test(files.read('tox.ini') ?? '');
    if (pytest && !has('regression_test') && !has('focused_test'))
      checks.push({
        name: 'test',
        kind: 'regression_test',
        command: [...venv, 'pytest'],
        timeoutMs: 30 * MINUTE,
      });
    if (checks.some((c) => c.command[0] === '.venv/bin/python'))
      notes.push(
        'python checks run in the virtualenv setup makes (.venv): pytest and ruff must be among what it installs',
      );
    if (files.read('manage.py') !== null && !client)
      client = {
        start: ['.venv/bin/python', 'manage.py', 'runserver', '--noreload', '127.0.0.1:{port}'],
        url: 'http://127.0.0.1:8000',
        readyPath: '/',
        fixtureData: true,
        how: "Django's manage.py: caseloop passes the port it picked to runserver",
      };
    const wanted = files.read('.python-version')?.trim();
    if (wanted)
      notes.push(
        `the repository asks for Python ${wanted} (.python-version): the venv is made with the python3 on PATH where the checks run`,
      );
    if (files.read('tox.ini') !== null || files.read('noxfile.py') !== null)
      skipped.push(
        `${files.read('tox.ini') !== null ? 'tox.ini' : 'noxfile.py'}: its environments are not made into checks; one can be a check of kind "other" (e.g. [tox, -e, lint]) where tox or nox is installed`,
      );
  }

  if (files.read('go.mod') !== null) {
    if (!setup.length)
      setup.push({
        name: 'download',
        command: ['go', 'mod', 'download'],
        timeoutMs: 15 * MINUTE,
        inputs: ['go.mod', ...(files.read('go.sum') !== null ? ['go.sum'] : [])],
      });
    if (!has('lint'))
      checks.push({ name: 'lint', kind: 'lint', command: ['go', 'vet', './...'], timeoutMs: 10 * MINUTE });
    if (!has('regression_test'))
      checks.push({
        name: 'test',
        kind: 'regression_test',
        command: ['go', 'test', './...'],
        timeoutMs: 30 * MINUTE,
      });
    if (!has('build'))
      checks.push({
        name: 'build',
        kind: 'build',
        command: ['go', 'build', './...'],
        timeoutMs: 15 * MINUTE,
      });
    notes.push('go.mod: go must be on PATH where the checks run');
  }

  checks.sort(
    (a, b) => MAKE_KINDS.findIndex((k) => k.kind === a.kind) - MAKE_KINDS.findIndex((k) => k.kind === b.kind),
  );
  return { setup, checks, client };
}
