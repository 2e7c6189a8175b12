/** Every way the projection machinery refuses to go on. The CLI prints these as one line, exit 2. */
export type ProjectionErrorCode =
  | 'fenced'
  | 'connection_lost'
  | 'stream_recreated'
  | 'stream_missing'
  | 'shape_changed'
  | 'no_active_version'
  | 'version_active'
  | 'checkpoint_moved'
  | 'unknown_projection'
  | 'verification_failed'
  | 'not_dead_lettered'
  | 'still_undecodable';

export class ProjectionError extends Error {
  constructor(
    readonly code: ProjectionErrorCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
    this.name = 'ProjectionError';
  }
}

export const isProjectionError = (e: unknown): e is ProjectionError => e instanceof ProjectionError;
