import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkOutputArtifactPath } from '@caseloop/contracts';
import { CliError, CommandDeps, DEFAULT_REPOSITORIES_FILE, REPO_COMMAND_DESCRIPTION } from '@caseloop/cli';
import { loadRepositoriesFile, RepositoryConfigError, TargetRepository } from '@caseloop/target-repositories';
import { Command } from 'commander';
import { ChromiumBrowser, DEFAULT_CHROMIUM_ARGS } from '../services/evidence/src/browser/chromium.browser';
import { ClientValidationRunner, flowName } from '../services/evidence/src/browser/client-validation.runner';
import type { HeldLease, LeasePort } from '../services/evidence/src/browser/lease.port';
import { ChecksRunner, StepEvent } from '../services/worker/src/checks/checks.runner';
import { DirectoryCheckLogStore } from '../services/worker/src/checks/directory-check-log.store';
import { createRedactor } from '../services/worker/src/checks/output.redactor';
import { Git, GitError, installAskpass } from '../services/worker/src/worktrees/git.adapter';
import { WorktreeManager } from '../services/worker/src/worktrees/worktree.manager';

export interface RepoCheckOptions {
  revision?: string;
  client: boolean;
  chromium: string;
  cacheDir: string;
  captures: string;
  keep: boolean;
  say: (line: string) => void;
}

/** The id the scratch worktree and its outputs are filed under (a case id in the worker). */
const SCRATCH = 'repo-check';
/** A failure's excerpt: its first lines (what ran) and its last (where it stopped, usually why). */
const FAILURE_HEAD = 4;
const FAILURE_TAIL = 12;
/** How much of a client's output is held for its failure excerpt: the end, where it says why. */
const APP_OUTPUT_KEPT = 64 * 1024;

/**
 * No other case competes for the browser here: a grant that always stands. The flow, its captures
 * and the page checks are the evidence service's own code; only the lease service is left out.
 */
const soleLease: LeasePort = {
  acquire: async (request): Promise<HeldLease> => ({
    resource: request.resource,
    token: 1,
    interrupted: false,
    expiresAt: () => Date.now() + request.ttlMs,
    check: async () => 'held',
    renew: async () => 'held',
    bindCapture: async () => 'held',
    release: async () => undefined,
  }),
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * The lines of a failure worth reading: blank lines dropped, each cut to a terminal's width. A long
 * output shows its first lines and its last: an install or a test runner prints progress first and
 * its error at the end (pnpm's postinstall failure, vitest's summary), so the head alone hides why.
 */
export function failureLines(output: string, head = FAILURE_HEAD, tail = FAILURE_TAIL): string[] {
  // Test runners colour their output even under CI=true; a terminal excerpt reads better without.
  // eslint-disable-next-line no-control-regex
  const plain = output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r\n?/g, '\n');
  const lines = plain
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim().length > 0);
  const shown = (ls: string[]) => ls.map((l) => `      | ${l.slice(0, 200)}`);
  if (lines.length <= head + tail) return shown(lines);
  return [
    ...shown(lines.slice(0, head)),
    `      | … ${lines.length - head - tail} lines …`,
    ...shown(lines.slice(lines.length - tail)),
  ];
}

/**
 * Packages whose install script downloads a binary from their own host, not the npm registry (a
 * test browser, an app shell), and the variable each reads to skip it. Behind a proxy that lets
 * only the registry through, the install fails in their postinstall.
 */
const BINARY_DOWNLOADS: { tool: string; failed: RegExp; skip: string }[] = [
  {
    tool: 'Cypress',
    failed: /Cypress App could not be downloaded|download\.cypress\.io/i,
    skip: 'CYPRESS_INSTALL_BINARY: "0"',
  },
  {
    tool: 'Puppeteer',
    failed: /puppeteer.*(Failed to (set up|download)|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT)/is,
    skip: 'PUPPETEER_SKIP_DOWNLOAD: "true"',
  },
  {
    tool: 'Electron',
    failed: /electron.*postinstall.*(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|RequestError)/is,
    skip: 'ELECTRON_SKIP_BINARY_DOWNLOAD: "1"',
  },
];

function downloadedBinary(output: string): { tool: string; skip: string } | null {
  if (!/postinstall|install\.js|could not be downloaded|Failed to (set up|download)/i.test(output))
    return null;
  return BINARY_DOWNLOADS.find((b) => b.failed.test(output)) ?? null;
}

/** Hints for failures whose cause is the machine, not the repository. */
export function hintFor(output: string): string | null {
  if (/Corepack cannot download|No compatible signature found/i.test(output))
    return 'corepack could not verify the package manager it downloads: the registry answering here serves no npm signing keys. Point COREPACK_NPM_REGISTRY at one that does, or, if you trust this registry, set env: { COREPACK_INTEGRITY_KEYS: "0" } on the repository';
  const binary = downloadedBinary(output);
  if (binary)
    return `an install script of ${binary.tool} downloads its binary from outside the npm registry and could not reach it: if no check or client needs it, skip the download with env: { ${binary.skip} } on the repository; otherwise this machine must reach ${binary.tool}'s download host`;
  if (
    /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to get local issuer/i.test(
      output,
    )
  )
    return "the registry's TLS certificate is not trusted here (a TLS-intercepting proxy or a private CA): set NODE_EXTRA_CA_CERTS (or SSL_CERT_FILE) to the CA bundle in the environment caseloop runs in; setup steps and checks get it from there";
  if (/corepack/i.test(output) && /(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|fetch failed)/.test(output))
    return 'corepack needs the npm registry once per package manager version (then it is in the cache directory): this machine cannot reach it';
  const pip = /No matching distribution found for (\S+)/.exec(output);
  if (pip) {
    const seen = /from versions: ([^)]*)\)/.exec(output)?.[1]?.trim();
    const offline = /NewConnectionError|Failed to establish a new connection|Name or service not known/.test(
      output,
    );
    return `pip found no ${pip[1]}${seen && seen !== 'none' ? ` (the indexes it reached have ${seen.slice(0, 80)})` : ''}${offline ? '; it could not reach an index' : ''}. pip reads no ~/.config/pip here (HOME is a throwaway): a mirror reaches it as PIP_INDEX_URL or PIP_EXTRA_INDEX_URL (and PIP_FIND_LINKS) in the environment caseloop runs in or in the repository's env; a pinned version the mirror lacks must be added to it`;
  }
  if (/(ENOTFOUND|EAI_AGAIN|ECONNREFUSED).*registry|network request .* failed/i.test(output))
    return 'the install could not reach its registry; a private one needs its token in secretFiles and an .npmrc in the repository';
  const missing =
    /(?:^|\n)\s*(?:(?:\/bin\/)?(?:ba)?sh: (?:line )?\d+: )?([\w.@+-]+): (?:command )?not found\s*(?:\n|$)/.exec(
      output,
    );
  if (missing)
    return `"${missing[1]}" is not installed here: a script calls it, and neither setup nor PATH provides it. Install it where the worker and the evidence service run, or add a setup step that does (a tool from npm runs through npx or the package's own scripts)`;
  if (/ERR_PNPM_FETCH_404|npm error 404|E404|Couldn't find package/i.test(output))
    return 'the lockfile names a package (or version) the registry answering here does not serve: a private package needs its registry in .npmrc and its token in secretFiles; a mirror may lack a version the public registry has';
  if (/E401|E403|Unable to authenticate/i.test(output))
    return 'the registry refused the install: give its token in secretFiles (e.g. NPM_TOKEN) and reference it from .npmrc';
  return null;
}

/**
 * `caseloop repo check <id>`: the repository's whole path through a case, before any report:
 * clone at the target head (the worker's mirror and worktree code), setup and every check (the
 * worker's check runner), the client started and the flow driven in Chromium with its captures
 * (the evidence service's runner). Prints each step with its time and, for a failure, its first
 * lines. Resolves false when anything failed.
 */
export async function runRepoCheck(repo: TargetRepository, o: RepoCheckOptions): Promise<boolean> {
  const scratch = mkdtempSync(join(tmpdir(), 'caseloop-repo-check-'));
  const dirs = {
    mirrors: join(scratch, 'mirrors'),
    worktrees: join(scratch, 'worktrees'),
    runs: join(scratch, 'runs'),
    artifacts: join(scratch, 'artifacts'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true, mode: 0o700 });
  let failed = 0;
  let steps = 0;
  const report = (ok: boolean, what: string, ms: number, detail = '') => {
    steps++;
    if (!ok) failed++;
    o.say(
      `  ${ok ? 'ok  ' : 'FAIL'} ${what.padEnd(44)} ${seconds(ms).padStart(8)}${detail ? `  ${detail}` : ''}`,
    );
  };
  try {
    const git = new Git({
      askpassPath: await installAskpass(join(scratch, 'askpass')),
      inheritedEnv: process.env,
    });
    const worktrees = new WorktreeManager(git, { mirrors: dirs.mirrors, worktrees: dirs.worktrees });
    o.say(`repo check ${repo.id}: ${repo.url} (${repo.targetBranch})`);

    let t = Date.now();
    let revision: string;
    let path: string;
    try {
      await worktrees.sync(repo);
      // --revision: a commit, branch or tag of the remote, not only one on the target branch.
      const wanted = o.revision ? await worktrees.fetchRevision(repo, o.revision) : null;
      if (o.revision && !wanted) throw new Error(`revision ${o.revision} is not in the repository`);
      revision = wanted ?? (await worktrees.targetHead(repo));
      path = (await worktrees.prepare(repo, SCRATCH, revision)).path;
    } catch (e) {
      const message = e instanceof GitError ? e.message : (e as Error).message;
      report(false, `clone ${o.revision ?? repo.targetBranch}`, Date.now() - t);
      for (const l of failureLines(message)) o.say(l);
      return false;
    }
    report(true, `clone ${o.revision ?? repo.targetBranch} @ ${revision.slice(0, 12)}`, Date.now() - t);

    const seen = new Set<string>();
    const runner = new ChecksRunner({
      logs: new DirectoryCheckLogStore(dirs.artifacts),
      runsDir: dirs.runs,
      cacheDir: o.cacheDir,
      inheritedEnv: process.env,
      redact: createRedactor([]),
      onStep: (e: StepEvent) => {
        seen.add(e.name);
        if (e.phase === 'cached') o.say(`  ok   setup ${e.name} (already done for these inputs)`);
        if (e.phase !== 'end') return;
        const r = e.run.result;
        const label =
          e.kind === 'setup' ? `setup ${e.name.replace(/^setup:/, '')}` : `check ${r.name} (${r.kind})`;
        const detail =
          r.outcome === 'passed'
            ? ''
            : `${r.outcome}${r.exitCode !== null ? ` (exit ${r.exitCode})` : ''}${e.run.blocker ? `; environment: ${e.run.blocker.reason}` : ''}`;
        report(r.outcome === 'passed', label, r.durationMs, detail);
        if (r.outcome === 'passed') return;
        for (const l of failureLines(e.output)) o.say(l);
        const hint = hintFor(e.output);
        if (hint) o.say(`      hint: ${hint}`);
        if (r.outputSha256)
          o.say(
            `      whole output: ${join(dirs.artifacts, checkOutputArtifactPath(SCRATCH, revision, r.outputSha256))}${o.keep ? '' : ' (--keep to keep it)'}`,
          );
      },
    });
    const runs = await runner.runAll(repo, SCRATCH, path, revision);
    // Checks that never started: after a failed setup step, or without a readable secret file.
    for (const r of runs.filter((x) => !seen.has(x.result.name)))
      report(
        false,
        `check ${r.result.name} (${r.result.kind})`,
        0,
        r.result.outcome === 'skipped'
          ? 'skipped: setup failed'
          : 'not run: a file in secretFiles cannot be read',
      );

    // The client runs from the prepared worktree: without its setup it fails for that reason only.
    const failedSetup = runs.find((r) => r.result.name.startsWith('setup:') && r.result.outcome !== 'passed');
    if (!o.client) o.say('  client: not run (--no-client)');
    else if (!repo.client) o.say('  client: none configured');
    else if (failedSetup)
      report(
        false,
        `client ${repo.client.start.join(' ').slice(0, 30)} + flow ${flowName(repo.client.flow)}`,
        0,
        `skipped: ${failedSetup.result.name} failed`,
      );
    else {
      t = Date.now();
      // The client's own output, shown here when it fails (why a dev server exited), never stored.
      let appOutput = '';
      const validation = new ClientValidationRunner(
        new ChromiumBrowser({
          executablePath: o.chromium,
          args: DEFAULT_CHROMIUM_ARGS,
          launchTimeoutMs: 60_000,
        }),
        soleLease,
        {
          leaseTtlMs: 600_000,
          leaseWaitMs: 1_000,
          renewWithinMs: 1_000,
          readyTimeoutMs: 120_000,
          stepTimeoutMs: 15_000,
          flowTimeoutMs: 180_000,
          viewport: { width: 1280, height: 800 },
          trace: false,
          cacheDir: o.cacheDir,
          appOutput: (text) => {
            appOutput = `${appOutput}${text}`.slice(-APP_OUTPUT_KEPT);
          },
        },
        { now: Date.now, newCaptureId: () => `cap-${randomBytes(8).toString('hex')}` },
      );
      const phase = await validation.run({
        caseId: SCRATCH,
        taskId: SCRATCH,
        revision,
        worktree: path,
        client: repo.client,
        repositoryEnv: repo.env,
        resource: 'browser:repo-check',
      });
      const ok = phase.outcome === 'passed';
      report(
        ok,
        `client ${repo.client.start.join(' ').slice(0, 30)} + flow ${flowName(repo.client.flow)}`,
        Date.now() - t,
        ok ? '' : `${phase.outcome}: ${phase.reason ?? ''}`,
      );
      if (!ok && appOutput.trim()) {
        o.say("      the client's output (shown here only, never stored):");
        for (const l of failureLines(appOutput)) o.say(l);
      }
      if (phase.captures.length) mkdirSync(o.captures, { recursive: true });
      for (const c of phase.captures) {
        const file = join(
          o.captures,
          `${c.failure ? 'failed-' : ''}${c.step.replace(/[^A-Za-z0-9_.-]+/g, '-')}.png`,
        );
        writeFileSync(file, c.png);
        o.say(
          `      ${c.failure ? 'failure screenshot' : 'capture'} ${c.step}: ${c.page.url} "${c.page.title}" → ${file} (${c.png.length} bytes)`,
        );
      }
      for (const v of phase.voided) o.say(`      void capture ${v.step}: ${v.detail}`);
    }
    o.say(
      failed === 0
        ? `repo check ${repo.id}: all ${steps} steps passed at ${revision.slice(0, 12)}`
        : `repo check ${repo.id}: ${failed} of ${steps} steps failed at ${revision.slice(0, 12)}`,
    );
    if (o.keep) o.say(`  scratch kept: ${scratch}`);
    return failed === 0;
  } finally {
    if (!o.keep) rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * `caseloop repo check <id>`, added to the `repo` group that @caseloop/cli registers (`repo init`).
 * It lives here, in the binary, because it runs the worker's and the evidence service's own code.
 */
export function registerRepoCheckCommand(program: Command, deps: CommandDeps): void {
  const repo =
    program.commands.find((c) => c.name() === 'repo') ??
    program.command('repo').description(REPO_COMMAND_DESCRIPTION);
  repo
    .command('check')
    .argument('<id>', 'the repository id in the repositories file')
    .description(
      'clone at the target head into a scratch worktree, run setup and every check, start the client, run the flow in Chromium and take its captures; exit 1 if anything fails',
    )
    .option(
      '--repositories <file>',
      'repositories file',
      process.env.CASELOOP_REPOSITORIES_FILE ?? DEFAULT_REPOSITORIES_FILE,
    )
    .option('--revision <rev>', 'a commit instead of the target head')
    .option('--no-client', 'setup and checks only')
    .option(
      '--chromium <path>',
      'the browser',
      process.env.EVIDENCE_BROWSER_EXECUTABLE ?? '/usr/bin/chromium',
    )
    .option('--cache-dir <dir>', "package managers' cache, shared between runs", join('.caseloop', 'cache'))
    .option('--captures <dir>', 'where the screenshots are written (default .caseloop/repo-check/<id>)')
    .option('--keep', 'keep the scratch clone and worktree')
    .action(
      async (
        id: string,
        o: {
          repositories: string;
          revision?: string;
          client: boolean;
          chromium: string;
          cacheDir: string;
          captures?: string;
          keep?: boolean;
        },
      ) => {
        let file;
        try {
          file = loadRepositoriesFile(o.repositories);
        } catch (e) {
          if (e instanceof RepositoryConfigError) throw new CliError(e.message);
          throw e;
        }
        const target = file.repositories.find((r) => r.id === id);
        if (!target)
          throw new CliError(
            `${o.repositories} has no repository "${id}" (it has: ${file.repositories.map((r) => r.id).join(', ')})`,
          );
        const ok = await runRepoCheck(target, {
          ...(o.revision ? { revision: o.revision } : {}),
          client: o.client,
          chromium: o.chromium,
          cacheDir: resolve(o.cacheDir),
          captures: resolve(o.captures ?? join('.caseloop', 'repo-check', id)),
          keep: o.keep === true,
          say: (l) => deps.context().io.out(l),
        });
        if (!ok) deps.setExitCode(1);
      },
    );
}
