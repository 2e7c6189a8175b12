import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  inspectRepository,
  parseRepositories,
  renderEntry,
  renderStarterFlow,
  RepositoryConfigError,
  repositoryUrl,
} from '@caseloop/target-repositories';
import { Command } from 'commander';
import { isMap, isSeq, parseDocument, YAMLSeq } from 'yaml';
import { CliError } from '../cli.errors';
import { CommandDeps } from '../command-deps';

const exec = promisify(execFile);

const gitEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
};
const git = async (args: string[], cwd?: string): Promise<string> =>
  (await exec('git', args, { cwd, env: gitEnv, timeout: 120_000, maxBuffer: 8 * 1024 * 1024 })).stdout.trim();

export const DEFAULT_REPOSITORIES_FILE = join('.caseloop', 'repositories.yaml');

/** A starter agent routes file: a pinned Claude Code route; the comments show the other kinds. */
const AGENT_ROUTES = `# The agent runtimes the worker runs on a case (services/worker/README.md). Pinned: which
# runtime, which model; nothing is chosen at run time. The sandbox's scripted runtime (a folder of
# prepared files copied over the worktree) needs no model: { kind: scripted, steps: [{ copy: ../fix }] }.
# Relative paths here are taken from this file's directory.
normal:
  name: claude-code
  timeoutMs: 1800000
  runtime: { kind: claude_code, model: claude-sonnet-4-5 }
  # The provider's own key, read from a file at each attempt (never one of caseloop's credentials):
  providerCredentialFiles: { ANTHROPIC_API_KEY: secrets/anthropic-api-key }
# One escalation, only after two distinct attempts failed the same focused check:
# escalation:
#   name: codex-high
#   timeoutMs: 3600000
#   runtime: { kind: codex, model: gpt-5-codex, reasoningEffort: high }
#   providerCredentialFiles: { OPENAI_API_KEY: secrets/openai-api-key }
escalation: null
maxAttempts: 3
`;

interface Source {
  /** Where the files are read from (the path itself, or a shallow clone of the URL). */
  dir: string;
  url: string;
  branch: string;
  name: string;
  cleanup: () => void;
}

async function openSource(target: string): Promise<Source> {
  const local = resolve(target);
  if (existsSync(local) && statSync(local).isDirectory()) {
    let top: string;
    try {
      top = await git(['rev-parse', '--show-toplevel'], local);
    } catch {
      throw new CliError(
        `${local} is not a git repository: caseloop clones a repository and pushes a branch to it (git init, git add, git commit first)`,
      );
    }
    let branch = 'main';
    try {
      branch = await git(['symbolic-ref', '--short', 'HEAD'], top);
    } catch {
      // A detached HEAD: main is the usual target; the entry says so.
    }
    return { dir: top, url: top, branch, name: basename(top), cleanup: () => undefined };
  }
  if (!repositoryUrl.safeParse(target).success)
    throw new CliError(
      `${target}: neither a directory nor a git URL (https://, ssh://, git@host:path, file://)`,
    );
  const dir = mkdtempSync(join(tmpdir(), 'caseloop-repo-init-'));
  try {
    await git(['clone', '--quiet', '--depth', '1', '--', target, join(dir, 'clone')]);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw new CliError(
      `cannot clone ${target}: ${String((e as { stderr?: string }).stderr ?? '')
        .trim()
        .split('\n')
        .at(-1)}`,
    );
  }
  const clone = join(dir, 'clone');
  const branch = await git(['symbolic-ref', '--short', 'HEAD'], clone).catch(() => 'main');
  return {
    dir: clone,
    url: target,
    branch,
    name: basename(target).replace(/\.git$/, ''),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface RepoInitOptions {
  out: string;
  id?: string;
  branch?: string;
  force?: boolean;
}

/** Writes (or adds to) the repositories file, a starter flow and, once, an agent routes file; returns what it wrote. */
export async function repoInit(
  target: string,
  opts: RepoInitOptions,
  say: (line: string) => void,
): Promise<{ id: string; file: string; flow: string }> {
  const source = await openSource(target);
  try {
    const read = (p: string): string | null => {
      try {
        return readFileSync(join(source.dir, p), 'utf8');
      } catch {
        return null;
      }
    };
    const list = (d: string): string[] => {
      try {
        return readdirSync(join(source.dir, d), { withFileTypes: true })
          .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules')
          .map((e) => e.name);
      } catch {
        return [];
      }
    };
    const inspection = inspectRepository({ read, list }, source.name);
    if (opts.id) inspection.id = opts.id;
    const out = resolve(opts.out);
    const base = dirname(out);
    mkdirSync(join(base, 'flows'), { recursive: true });

    // The repository's own flow, if it ships one, becomes the operators' copy: flows are configuration,
    // never read from the change under validation.
    const shipped = ['caseloop/flow.yaml', 'caseloop/flow.yml', 'caseloop/flow.js'].find(
      (p) => read(p) !== null,
    );
    const flowFile = join(base, 'flows', `${inspection.id}${shipped ? extname(shipped) : '.yaml'}`);
    if (!existsSync(flowFile) || opts.force) {
      if (shipped) copyFileSync(join(source.dir, shipped), flowFile);
      else writeFileSync(flowFile, renderStarterFlow(inspection));
    }
    const entry = renderEntry(inspection, {
      url: source.url,
      targetBranch: opts.branch ?? source.branch,
      flow: relative(base, flowFile),
      nodeHere: process.version,
    });

    const entryDoc = parseDocument(`repositories:\n${entry}`);
    let doc = entryDoc;
    if (existsSync(out)) {
      const existing = parseDocument(readFileSync(out, 'utf8'));
      const list = existing.get('repositories');
      if (!isSeq(list)) throw new CliError(`${out} has no "repositories:" list to add to`);
      const at = list.items.findIndex((r) => isMap(r) && r.get('id') === inspection.id);
      if (at >= 0 && !opts.force)
        throw new CliError(
          `${out} already has a repository "${inspection.id}": --force replaces it, --id names another`,
        );
      const added = (entryDoc.get('repositories') as YAMLSeq).items[0];
      if (at >= 0) list.items.splice(at, 1, added as never);
      else list.items.push(added as never);
      doc = existing;
    }
    const text = doc.toString({ lineWidth: 0 });
    // What is written must load: the same parse the worker and the evidence service do.
    try {
      parseRepositories(parseDocument(text).toJS(), out, base);
    } catch (e) {
      if (e instanceof RepositoryConfigError)
        throw new CliError(`the proposed entry does not validate: ${e.problems.join('; ')}`);
      throw e;
    }
    writeFileSync(
      out,
      text.startsWith('#') ? text : `# Target repositories (docs/target-repositories.md).\n${text}`,
    );
    const routes = join(base, 'agent-routes.yaml');
    if (!existsSync(routes)) writeFileSync(routes, AGENT_ROUTES);

    // Short when the file is below here; a path climbing out of here (../../../tmp/x) reads worse than its own.
    const rel = (p: string) => {
      const r = relative(process.cwd(), p);
      return r === '' ? '.' : r.startsWith('..') || isAbsolute(r) ? p : r;
    };
    say(`${inspection.id}: ${source.url} (${opts.branch ?? source.branch})`);
    say(
      `  package manager: ${inspection.packageManager ?? 'none'}${inspection.lockfile ? `, ${inspection.lockfile}` : ''}`,
    );
    if (inspection.node)
      say(`  node: ${inspection.node.wanted} (${inspection.node.from}); here ${process.version}`);
    say(`  setup: ${inspection.setup.map((s) => s.command.join(' ')).join('; ') || 'none'}`);
    say(
      `  checks: ${inspection.checks.map((c) => `${c.name} (${c.kind}${c.cwd ? `, in ${c.cwd}` : ''})`).join(', ') || 'none found: add one'}`,
    );
    say(
      `  client: ${inspection.client ? `${inspection.client.start.join(' ')}${inspection.client.cwd ? ` (in ${inspection.client.cwd})` : ''}` : 'none'}`,
    );
    for (const n of inspection.notes) say(`  note: ${n}`);
    say(
      `wrote ${rel(out)}, ${rel(flowFile)}${existsSync(routes) ? `, ${rel(routes)} (agent routes: edit before a real run)` : ''}`,
    );
    say('next:');
    say(`  npx caseloop repo check ${inspection.id} --repositories ${rel(out)}`);
    say(`  npm start -- --repositories ${rel(out)}`);
    return { id: inspection.id, file: out, flow: flowFile };
  } finally {
    source.cleanup();
  }
}

/** The `repo` command group; `repo check` joins it from the binary (scripts/repo-check.ts), which runs the services' code. */
export const REPO_COMMAND_DESCRIPTION =
  'onboard a target repository: propose its entry, then prove it before any report arrives';

export function registerRepoCommands(program: Command, deps: CommandDeps): void {
  const repo = program.command('repo').description(REPO_COMMAND_DESCRIPTION);
  repo
    .command('init')
    .argument('<path-or-git-url>', 'the repository: a local checkout or a clone URL')
    .description(
      'inspect a repository and write a commented repositories entry, a starter flow and agent routes',
    )
    .option('--out <file>', 'repositories file to write or add to', DEFAULT_REPOSITORIES_FILE)
    .option('--id <id>', 'repository id (default: from package.json or the directory name)')
    .option('--branch <branch>', 'target branch (default: the checked-out or default branch)')
    .option('--force', 'replace an entry with the same id and its starter flow')
    .action(async (target: string, o: RepoInitOptions) => {
      await repoInit(target, o, (l) => deps.context().io.out(l));
    });
}
