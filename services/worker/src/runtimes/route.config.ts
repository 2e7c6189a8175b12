import { z } from 'zod';
import { argv } from '@caseloop/target-repositories';
import { SECRET_LOOKING } from './runtime.environment';

/** Routes are pinned in configuration: which runtime, which model, which effort. Nothing is chosen at run time. */

const model = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$/, 'not a model name');

const scriptedStep = z
  .object({
    /** A unified diff applied with `git apply`. */
    patch: z.string().min(1).optional(),
    /** A directory whose files are copied over the worktree. */
    copy: z.string().min(1).optional(),
    exitCode: z.number().int().min(0).max(255).default(0),
  })
  .strict();

export const runtimeSpec = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('codex'),
      binary: z.string().min(1).default('codex'),
      model,
      reasoningEffort: z.enum(['minimal', 'low', 'medium', 'high']),
    })
    .strict(),
  z.object({ kind: z.literal('claude_code'), binary: z.string().min(1).default('claude'), model }).strict(),
  /** Any program. `{briefFile}`, `{worktree}` and `{attempt}` in arguments are replaced; the prompt is also on stdin. */
  z.object({ kind: z.literal('command'), argv }).strict(),
  /** Applies prepared changes, one step per attempt number (attempt 1 = steps[0]); beyond the list nothing changes. */
  z.object({ kind: z.literal('scripted'), steps: z.array(scriptedStep).max(50) }).strict(),
]);
export type RuntimeSpec = z.infer<typeof runtimeSpec>;
export type ScriptedStep = z.infer<typeof scriptedStep>;

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'not an environment variable name')
  .refine((n) => !SECRET_LOOKING.test(n), { message: 'looks like a secret; use providerCredentialFiles' });

export const routeSpec = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/, 'not a route name'),
    runtime: runtimeSpec,
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .max(6 * 60 * 60 * 1000),
    /** Non-secret variables for this runtime. */
    env: z.record(envName, z.string().max(4096)).default({}),
    /**
     * The provider's own credential for this runtime (e.g. `OPENAI_API_KEY: /run/secrets/openai`),
     * read from a file at each attempt. Never one of caseloop's credentials.
     */
    providerCredentialFiles: z
      .record(
        z
          .string()
          .regex(/^[A-Z][A-Z0-9_]{0,63}$/)
          .refine((n) => !/^(CASELOOP_|NATS_|AWS_|GIT_|DISCORD)/.test(n), {
            message: "is one of caseloop's own names",
          }),
        z.string().min(1),
      )
      .default({}),
  })
  .strict();
export type RouteSpec = z.infer<typeof routeSpec>;

export const routesFile = z
  .object({
    normal: routeSpec,
    escalation: routeSpec.nullable().default(null),
    /** Normal attempts per round (a round restarts when a reviewer requests a revision). */
    maxAttempts: z.number().int().min(1).max(20).default(3),
    /**
     * What one case may spend over all its rounds; a spent budget stops the task with a
     * `budget_exhausted` blocker that says what was used. Each limit is optional.
     */
    budget: z
      .object({
        /** Working time: from the assignment, without the time the case waited for a human. */
        wallClockMs: z
          .number()
          .int()
          .min(1000)
          .max(30 * 24 * 60 * 60 * 1000)
          .optional(),
        /** Attempts of every route in every round. */
        attempts: z.number().int().min(1).max(200).optional(),
        /** The sum of the costs the runtimes reported (Claude Code reports one; Codex does not). */
        costUsd: z.number().positive().max(100_000).optional(),
      })
      .strict()
      .default({}),
  })
  .strict();
export type CaseBudget = RoutesFile['budget'];
export type RoutesFile = z.infer<typeof routesFile>;
