import { JetStreamManager } from 'nats';
import { QueryRunner } from 'typeorm';
import { ProjectionCatalog, VersionInfo } from './projection-catalog';
import { ProjectionError } from './projection.errors';
import { Projection, projectionShape } from './projection';

/** `live` writes whichever version readers see; `{ version }` builds that version (a rebuild). */
export type RunnerTarget = 'live' | { version: number };

/** What a runner is bound to: the version it writes, its checkpoint and epoch, the stream's identity. */
export interface VersionBinding {
  version: number;
  checkpoint: number;
  epoch: number;
  streamCreated: string;
}

export function runnerRole(target: RunnerTarget): 'live' | 'build' {
  return target === 'live' ? 'live' : 'build';
}

/**
 * Takes the session advisory lock of the (projection, role) on the runner's own connection: a second
 * runner of the same role is refused (fenced). The lock goes with the connection.
 */
export async function takeRunnerLock(
  qr: QueryRunner,
  catalog: ProjectionCatalog,
  projection: string,
  target: RunnerTarget,
): Promise<void> {
  const role = runnerRole(target);
  const key = `caseloop/${catalog.schema}/${projection}/${role}`;
  const [row] = await qr.query(`select pg_try_advisory_lock(hashtextextended($1, 0)) as ok`, [key]);
  if (!row?.ok) {
    throw new ProjectionError('fenced', `another ${role} runner of ${projection} holds its lock`);
  }
}

/** Gives up every advisory lock the runner's connection holds. */
export async function releaseRunnerLocks(qr: QueryRunner): Promise<void> {
  await qr.query(`select pg_advisory_unlock_all()`);
}

/** Resolves the version to write, its checkpoint and the stream identity it is bound to. */
export async function bindVersion(
  catalog: ProjectionCatalog,
  qr: QueryRunner,
  jsm: JetStreamManager,
  p: Projection,
  stream: string,
  target: RunnerTarget,
): Promise<VersionBinding> {
  const info =
    target === 'live' ? await catalog.active(p.name, qr) : await catalog.version(p.name, target.version, qr);
  if (!info)
    throw new ProjectionError(
      'no_active_version',
      `${p.name} has no ${target === 'live' ? 'active version' : `v${target.version}`}`,
    );
  if (info.shape !== projectionShape(p)) {
    throw new ProjectionError(
      'shape_changed',
      `${p.name} v${info.version} was built by another revision or table shape; run \`caseloop rebuild ${p.name}\``,
    );
  }
  const streamCreated = await checkStream(jsm, stream, info);
  return { version: info.version, checkpoint: info.checkpoint, epoch: info.epoch, streamCreated };
}

async function checkStream(jsm: JetStreamManager, stream: string, info: VersionInfo): Promise<string> {
  let created: string;
  let lastSeq: number;
  try {
    const si = await jsm.streams.info(stream);
    created = si.created;
    lastSeq = si.state.last_seq;
  } catch (e) {
    throw new ProjectionError('stream_missing', `stream ${stream} is not there (${(e as Error).message})`);
  }
  if (info.streamCreated && (info.stream !== stream || info.streamCreated !== created)) {
    throw new ProjectionError(
      'stream_recreated',
      `${info.projection} v${info.version} was built from stream ${info.stream} created ${info.streamCreated}, ` +
        `but ${stream} was created ${created}; refusing to apply it — rebuild the projection`,
    );
  }
  if (info.checkpoint > lastSeq) {
    throw new ProjectionError(
      'stream_recreated',
      `${info.projection} v${info.version} is at seq ${info.checkpoint} but ${stream} ends at ${lastSeq}`,
    );
  }
  return created;
}

/**
 * Inside the batch's transaction: live runners share-lock the projection's head row, so a switch
 * (which takes it for update) waits for the batch in flight and the next batch sees the new version;
 * a build runner share-locks its version's row and is fenced once the version is no longer building.
 */
export async function lockVersion(
  qr: QueryRunner,
  catalog: ProjectionCatalog,
  projection: string,
  target: RunnerTarget,
): Promise<{ version: number; checkpoint: number; epoch: number }> {
  const checkpoints = catalog.t('projection_checkpoints');
  if (target === 'live') {
    const [h] = await qr.query(
      `select h.active_version, c.seq, c.epoch from ${catalog.t('projection_heads')} h
         join ${checkpoints} c on c.projection = h.projection and c.version = h.active_version
        where h.projection = $1 for share of h`,
      [projection],
    );
    if (!h) throw new ProjectionError('no_active_version', `${projection} has no active version`);
    return { version: Number(h.active_version), checkpoint: Number(h.seq), epoch: Number(h.epoch) };
  }
  const [v] = await qr.query(
    `select v.status, c.seq, c.epoch from ${catalog.t('projection_versions')} v
       join ${checkpoints} c on c.projection = v.projection and c.version = v.version
      where v.projection = $1 and v.version = $2 for share of v`,
    [projection, target.version],
  );
  if (!v || v.status !== 'building') {
    throw new ProjectionError(
      'fenced',
      `${projection} v${target.version} is ${v?.status ?? 'gone'}, not building`,
    );
  }
  return { version: target.version, checkpoint: Number(v.seq), epoch: Number(v.epoch) };
}
