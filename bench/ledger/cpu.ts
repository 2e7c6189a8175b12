import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's times (USER_HZ: 100 on every Linux this runs on). */
const TICKS = 100;

/**
 * CPU seconds used by every Postgres process on this machine (backends, parallel workers, WAL
 * writer, checkpointer; exited children are in the postmaster's totals), read from /proc. Null
 * when Postgres is not local or /proc cannot be read: the figure is then simply left out.
 */
function postgresCpuSeconds(): number | null {
  let ticks = 0;
  let seen = 0;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      // Fields after the command name: state is field 3, utime/stime/cutime/cstime are 14–17.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      seen++;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return seen > 0 ? ticks / TICKS : null;
}

export interface CpuSpent {
  /** This Node process, all its threads. */
  node_cpu_s: number;
  postgres_cpu_s: number | null;
}

/**
 * Where a measured stretch spent its CPU: on two cores shared by Node and Postgres, the sum of both
 * against twice the wall time says how much of the machine it used.
 */
export function cpuMeter(): () => CpuSpent {
  const node0 = process.cpuUsage();
  const pg0 = postgresCpuSeconds();
  return () => {
    const node = process.cpuUsage(node0);
    const pg1 = postgresCpuSeconds();
    return {
      node_cpu_s: round((node.user + node.system) / 1e6),
      postgres_cpu_s: pg0 === null || pg1 === null ? null : round(pg1 - pg0),
    };
  };
}

const round = (n: number): number => Math.round(n * 100) / 100;
