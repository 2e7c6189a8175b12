import { readFileSync } from 'node:fs';
import { identityConfig, IdentityConfig, JudgementRoute, judgementRouteSchema } from '@caseloop/identity';
import { loadRepositoriesFile } from '@caseloop/target-repositories';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { RepositoryRoute } from './cases/case.commands';
import { ChannelRoute } from './triage/readiness.rules';
import { CoordinatorConfig } from './coordinator.config';

const routesFileSchema = z
  .object({
    channels: z
      .array(
        z
          .object({
            channelId: z.string().regex(/^\d{1,25}$/),
            repository: z.string().min(1).nullable(),
            owner: z.string().min(1).max(100).nullable().default(null),
          })
          .strict(),
      )
      .default([]),
    /** Owner per repository id, when it is not the repository itself. */
    owners: z.record(z.string(), z.string().min(1).max(100)).default({}),
  })
  .strict();

/** What the coordinator's rules read from configuration files, loaded once at start. */
export interface CoordinatorSettings {
  identity: IdentityConfig;
  /** The judgement route asked in the identity review band, or null (offline only). */
  judgement: JudgementRoute | null;
  /** The judgement route asked what a case's conversation supplies, or null (readiness rules only). */
  readinessJudgement: JudgementRoute | null;
  routes: ChannelRoute[];
  repositories: RepositoryRoute[];
  maxQuestions: number;
  taskIdleMs: number;
  privateMarkers: readonly string[] | undefined;
}

export class SettingsError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`${key}: ${message}`);
    this.name = 'SettingsError';
  }
}

function readStructured(key: string, file: string): unknown {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (e) {
    throw new SettingsError(key, `unreadable (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return parseYaml(raw) as unknown;
  } catch {
    throw new SettingsError(key, 'not valid YAML or JSON');
  }
}

/** A judgement route file (identity or readiness: one format), or null when the key is unset. */
function judgementRoute(
  config: CoordinatorConfig,
  key: 'COORDINATOR_JUDGEMENT_FILE' | 'COORDINATOR_READINESS_JUDGEMENT_FILE',
): JudgementRoute | null {
  const file = config[key];
  if (!file) return null;
  const parsed = judgementRouteSchema.safeParse(readStructured(key, file) ?? {});
  if (!parsed.success)
    throw new SettingsError(
      key,
      parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; '),
    );
  return parsed.data;
}

export function loadSettings(config: CoordinatorConfig): CoordinatorSettings {
  let identityInput: Record<string, unknown> = {};
  if (config.COORDINATOR_IDENTITY_FILE)
    identityInput = (readStructured('COORDINATOR_IDENTITY_FILE', config.COORDINATOR_IDENTITY_FILE) ??
      {}) as Record<string, unknown>;
  if (config.COORDINATOR_LINK_THRESHOLD !== undefined)
    identityInput.linkThreshold = config.COORDINATOR_LINK_THRESHOLD;
  if (config.COORDINATOR_REVIEW_THRESHOLD !== undefined)
    identityInput.reviewThreshold = config.COORDINATOR_REVIEW_THRESHOLD;
  let identity: IdentityConfig;
  try {
    identity = identityConfig(identityInput);
  } catch (e) {
    throw new SettingsError(
      'COORDINATOR_IDENTITY_FILE',
      e instanceof z.ZodError
        ? e.issues.map((i) => i.path.join('.') || '(root)').join(', ') + ' invalid'
        : (e as Error).message,
    );
  }
  const judgement = judgementRoute(config, 'COORDINATOR_JUDGEMENT_FILE');
  const readinessJudgement = judgementRoute(config, 'COORDINATOR_READINESS_JUDGEMENT_FILE');
  const routesDoc = config.COORDINATOR_ROUTES_FILE
    ? readStructured('COORDINATOR_ROUTES_FILE', config.COORDINATOR_ROUTES_FILE)
    : {};
  const parsedRoutes = routesFileSchema.safeParse(routesDoc ?? {});
  if (!parsedRoutes.success) {
    throw new SettingsError(
      'COORDINATOR_ROUTES_FILE',
      parsedRoutes.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; '),
    );
  }
  const repos = config.COORDINATOR_REPOSITORIES_FILE
    ? loadRepositoriesFile(config.COORDINATOR_REPOSITORIES_FILE).repositories
    : [];
  const owners = parsedRoutes.data.owners;
  const repositories: RepositoryRoute[] = repos.map((r) => ({
    id: r.id,
    owner: owners[r.id] ?? r.id,
    targetBranch: r.targetBranch,
    checkKinds: [...new Set(r.checks.map((c) => c.kind).filter((k) => k !== 'other'))],
  }));
  for (const ch of parsedRoutes.data.channels) {
    if (ch.repository && !repositories.some((r) => r.id === ch.repository)) {
      throw new SettingsError(
        'COORDINATOR_ROUTES_FILE',
        `channel ${ch.channelId} names repository ${ch.repository}, which the repositories file does not define`,
      );
    }
  }
  return {
    identity,
    judgement,
    readinessJudgement,
    routes: parsedRoutes.data.channels.map((c) => ({
      channelId: c.channelId,
      repository: c.repository,
      owner: c.owner ?? (c.repository ? (owners[c.repository] ?? null) : null),
    })),
    repositories,
    maxQuestions: config.COORDINATOR_MAX_QUESTIONS,
    taskIdleMs: config.COORDINATOR_TASK_IDLE_MS,
    privateMarkers: config.COORDINATOR_PRIVATE_MARKERS
      ? config.COORDINATOR_PRIVATE_MARKERS.split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined,
  };
}
