import type { WorldGuild } from './world-guild';
import type { MessageStore } from './world-message-store';
import type { WorldRenderer } from './world-render';
import type { WorldEvent, WorldOptions } from './world-types';

/**
 * What the world's operations share: the options, the guild, its messages, the API shapes, and the
 * one place events are reported to gateway sessions.
 */
export interface WorldContext {
  readonly options: WorldOptions;
  readonly guild: WorldGuild;
  readonly store: MessageStore;
  readonly render: WorldRenderer;
  emit(event: WorldEvent): void;
}
