/**
 * The process groups a worker has running. Agents and checks are spawned detached (their own
 * group, so a timeout can kill grandchildren); that also means they would outlive the worker.
 * On shutdown every live group is killed, and an interrupted attempt is re-run on restart.
 */
export class ProcessGroups {
  private readonly live = new Set<number>();

  add(pid: number): void {
    this.live.add(pid);
  }

  delete(pid: number): void {
    this.live.delete(pid);
  }

  get size(): number {
    return this.live.size;
  }

  killAll(signal: NodeJS.Signals = 'SIGKILL'): void {
    for (const pid of this.live) {
      try {
        process.kill(-pid, signal);
      } catch {
        // already gone
      }
    }
    this.live.clear();
  }
}
