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

export const checkSpec = z
  .object({
    name: z.string().regex(CHECK_NAME, 'not a check name (letters, digits, _ . : -)'),
    kind: checkKind,
    command: argv,
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .max(6 * 60 * 60 * 1000),
  })
  .strict();
export type CheckSpec = z.infer<typeof checkSpec>;

export const clientSpec = z
  .object({
    /** How to start the client against the worktree (run with the worktree as cwd). */
    start: argv,
    /** Where the started client answers, e.g. `http://127.0.0.1:4173`. */
    url: z.string().url(),
    /** Polled until it answers 2xx before the flow starts. */
    readyPath: z.string().startsWith('/').max(1024).optional(),
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
