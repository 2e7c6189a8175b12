/**
 * Keeps the first and last `limit / 2` bytes of a stream and counts the rest, so a command that
 * prints megabytes costs a bounded amount of memory and still shows how it started and how it ended.
 */
export class HeadTailBuffer {
  private readonly half: number;
  private head = Buffer.alloc(0);
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;

  constructor(limitBytes: number) {
    this.half = Math.max(1, Math.floor(limitBytes / 2));
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.head.length < this.half) {
      const take = Math.min(this.half - this.head.length, rest.length);
      this.head = Buffer.concat([this.head, rest.subarray(0, take)]);
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes > this.half && this.tail.length > 0) {
      const first = this.tail[0] as Buffer;
      const excess = this.tailBytes - this.half;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
      }
    }
  }

  get totalBytes(): number {
    return this.total;
  }

  get truncated(): boolean {
    return this.total > this.head.length + this.tailBytes;
  }

  toString(): string {
    const omitted = this.total - this.head.length - this.tailBytes;
    const tail = Buffer.concat(this.tail).toString('utf8');
    if (omitted <= 0) return this.head.toString('utf8') + tail;
    return `${this.head.toString('utf8')}\n[... ${omitted} bytes omitted ...]\n${tail}`;
  }

  /** The last `bytes` bytes seen (for tails of runtime output). */
  lastBytes(bytes: number): string {
    const all = this.tailBytes > 0 ? Buffer.concat(this.tail) : this.head;
    return all.subarray(Math.max(0, all.length - bytes)).toString('utf8');
  }
}
