import { z } from 'zod';
import { checkKind, safeId } from '@caseloop/contracts';

/**
 * A target repository as configured by its operators. The worker reads the checks; the evidence
 * service reads `client`. Both parse the same file with this schema, so they can never disagree
 * about what a repository is.
 */

/** One argument vector. No shell string is ever accepted: nothing here is interpreted by `sh`. */
export const argv = z.array(z.string().min(1).max(4096)).min(1).max(256);

const BRANCH = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/;
/** What `git check-ref-format --branch` would accept, minus anything a shell or a path could misread. */
export const branchName = z
  .string()
  .regex(BRANCH, 'not a plain branch name')
  .refine(
    (b) =>
      !b.includes('..') &&
      !b.includes('//') &&
      !b.endsWith('/') &&
      !b.endsWith('.') &&
      !b.endsWith('.lock') &&
      !b.includes('/.'),
    {
      message: 'not a valid git branch name',
    },
  );

/**
 * A remote URL (`https://`, `ssh://`, `file://`, `git@host:path`) or an absolute local path.
 * Credentials embedded in the URL are refused: they belong in `credentialsFile`, which is never logged.
 * A leading `-` is refused because git would read it as an option.
 */
export const repositoryUrl = z
  .string()
  .min(1)
  .max(2048)
  .refine((u) => !u.startsWith('-'), { message: 'must not start with "-"' })
  .refine((u) => !/[\s\0]/.test(u), { message: 'must not contain whitespace' })
  .refine((u) => !/^[a-z][a-z0-9+.-]*:\/\/[^/@]*@/i.test(u) || /^ssh:\/\/[^/:@]+@/i.test(u), {
    message: 'must not embed credentials; use credentialsFile',
  })
  .refine(
    (u) =>
      /^(https?|ssh|git|file):\/\//i.test(u) ||
      /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:/.test(u) ||
      u.startsWith('/'),
    {
      message: 'must be a remote URL or an absolute path',
    },
  );

export const CHECK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/;

/**
 * Names that look like a secret (or a path to one) are refused in `env`: a value there is written
 * into configuration that is shown and copied around. Secrets come from `secretFiles` only.
 */
export const SECRET_LOOKING_NAME =
  /(TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE|API_?KEY|AUTH|_KEY$|_FILE$|^AWS_|^NATS_|^GIT_|^CASELOOP_|^DISCORD)/i;
/** Set by caseloop itself for every setup step, check and client; not configurable. */
export const RESERVED_ENV =
  /^(PATH|HOME|TMPDIR|CI|PORT|npm_config_cache|COREPACK_HOME|XDG_CACHE_HOME|XDG_DATA_HOME|YARN_CACHE_FOLDER)$/;

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'not an environment variable name')
  .refine((n) => !SECRET_LOOKING_NAME.test(n), {
    message: 'looks like a secret: give it in secretFiles (read from a file, never logged)',
  })
  .refine((n) => !RESERVED_ENV.test(n), { message: 'is set by caseloop itself' });
/** Non-secret variables: shown in configuration, so nothing here may be a credential. */
export const envMap = z.record(envName, z.string().max(4096));

/**
 * A directory inside the repository (`packages/web`): relative, no `..`, no leading `/`.
 * Monorepo packages run their commands there.
 */
export const repoRelativeDir = z
  .string()
  .min(1)
  .max(1024)
  .refine((d) => !d.startsWith('/') && !d.split(/[\\/]/).includes('..') && !/[\0\n]/.test(d), {
    message: 'must be a path inside the repository (relative, without "..")',
  });

const timeoutMs = z
  .number()
  .int()
  .min(100)
  .max(6 * 60 * 60 * 1000);

export const checkSpec = z
  .object({
    name: z.string().regex(CHECK_NAME, 'not a check name (letters, digits, _ . : -)'),
    kind: checkKind,
    command: argv,
    timeoutMs,
    /** Run here instead of the repository root. */
    cwd: repoRelativeDir.optional(),
    /** Non-secret variables for this check only (over the repository's `env`). */
    env: envMap.optional(),
  })
  .strict();
export type CheckSpec = z.infer<typeof checkSpec>;

/**
 * What makes a fresh worktree runnable (`npm ci`, `corepack pnpm install --frozen-lockfile`).
 * Setup runs before the checks, once per worktree and `inputs`: when every listed file is the same
 * at the new revision as when setup last succeeded there, it is not run again (an attempt that
 * changes source files keeps its installed dependencies). Without `inputs` it runs once per revision.
 */
export const setupStep = z
  .object({
    name: z.string().regex(CHECK_NAME, 'not a step name (letters, digits, _ . : -)'),
    command: argv,
    timeoutMs,
    cwd: repoRelativeDir.optional(),
    env: envMap.optional(),
    /** Files whose content decides whether the step must run again, e.g. `package.json`, `package-lock.json`. */
    inputs: z.array(repoRelativeDir).max(50).optional(),
  })
  .strict();
export type SetupStep = z.infer<typeof setupStep>;

export const clientSpec = z
  .object({
    /**
     * How to start the client against the worktree. An argument `{port}` is replaced by the port
     * caseloop chose; the same port is in `$PORT`. With `port` set, that fixed port is used instead.
     */
    start: argv,
    /** Where the started client answers, e.g. `http://127.0.0.1:4173`; its port is replaced (see `port`). */
    url: z.string().url(),
    /**
     * A client that cannot be told its port (a fixed `vite preview` on 4173): it must answer on this
     * port. caseloop then starts it only while it holds the browser lease, so two cases never race
     * for the port. Without it caseloop picks a free port for every start and gives it as `$PORT`.
     */
    port: z.number().int().min(1).max(65_535).optional(),
    /** Polled until it answers 2xx before the flow starts (path on the client's origin). */
    readyPath: z.string().startsWith('/').max(1024).optional(),
    /** Run here instead of the repository root (a monorepo's web package). */
    cwd: repoRelativeDir.optional(),
    /** Non-secret variables for the client. */
    env: envMap.optional(),
    /** The flow file the evidence service drives, relative to the configuration file. */
    flow: z.string().min(1).max(1024),
    /** The client needs fixture data; missing fixtures are a blocker, never a failure of the change. */
    fixtureData: z.boolean(),
  })
  .strict();
export type ClientSpec = z.infer<typeof clientSpec>;

export const targetRepository = z
  .object({
    id: safeId,
    url: repositoryUrl,
    targetBranch: branchName,
    /** A file holding `token` or `username:token`. Read by git's askpass helper only. */
    credentialsFile: z.string().min(1).max(1024).optional(),
    /** Run before the checks in every fresh worktree (see `setupStep`). */
    setup: z.array(setupStep).max(20).optional(),
    /** Non-secret variables for every setup step, check and the client (under its own `client.env`). */
    env: envMap.optional(),
    /**
     * Secrets for setup and checks (a private registry's token for `.npmrc`), by variable name:
     * each value is read from its file at each run, handed to the process, redacted from every
     * output, and never written to the ledger, a log or a receipt. Never given to the agent.
     */
    secretFiles: z
      .record(
        z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'not an environment variable name')
          .refine((n) => !/^(CASELOOP_|NATS_|AWS_|GIT_|DISCORD)/i.test(n) && !RESERVED_ENV.test(n), {
            message: "is one of caseloop's own names",
          }),
        z.string().min(1).max(1024),
      )
      .optional(),
    checks: z.array(checkSpec).min(1).max(50),
    client: clientSpec.optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    const seen = new Set<string>();
    r.checks.forEach((c, i) => {
      if (seen.has(c.name))
        ctx.addIssue({ code: 'custom', path: ['checks', i, 'name'], message: 'duplicate check name' });
      seen.add(c.name);
    });
    const steps = new Set<string>();
    (r.setup ?? []).forEach((c, i) => {
      if (steps.has(c.name))
        ctx.addIssue({ code: 'custom', path: ['setup', i, 'name'], message: 'duplicate setup step name' });
      steps.add(c.name);
    });
  });
export type TargetRepository = z.infer<typeof targetRepository>;

export const repositoriesFile = z
  .object({ repositories: z.array(targetRepository).min(1).max(500) })
  .strict()
  .superRefine((f, ctx) => {
    const seen = new Set<string>();
    f.repositories.forEach((r, i) => {
      if (seen.has(r.id))
        ctx.addIssue({ code: 'custom', path: ['repositories', i, 'id'], message: 'duplicate repository id' });
      seen.add(r.id);
    });
  });
export type RepositoriesFile = z.infer<typeof repositoriesFile>;
