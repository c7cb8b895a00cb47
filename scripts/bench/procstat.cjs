'use strict';
// CPU accounting for every bench, read from /proc: what each process of a scenario (the app, its
// PostgreSQL backends, Redis, the broker) used while it was measured, and how busy the machine was.
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');

const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim() || 100);

/** CPU time (µs) of each live process of the list; a process that is gone is left out. */
function cpuByPid(pids) {
  const byPid = new Map();
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byPid.set(pid, (Number(fields[11]) + Number(fields[12])) * TICK_US); // utime, stime
    } catch {
      // The process is gone; it adds nothing.
    }
  }
  return byPid;
}

/** CPU time (µs) the listed processes have used so far. */
function cpuMicros(pids) {
  let total = 0;
  for (const us of cpuByPid(pids).values()) total += us;
  return total;
}

/**
 * CPU used since `before` by the processes it lists. A process that ended in between took its
 * figures with it: it counts nothing, never a negative. Processes started in between are not
 * counted either (pools are warm by then).
 */
function cpuSince(before) {
  const after = cpuByPid([...before.keys()]);
  let used = 0;
  for (const [pid, us] of before) used += (after.get(pid) ?? us) - us;
  return used;
}

/** The pids whose /proc/<pid>/<file> text passes `test` (processes that end meanwhile are left out). */
function pidsWhere(file, test) {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return test(fs.readFileSync(`/proc/${d}/${file}`, 'utf8'));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The PostgreSQL backends serving `database` (their title names it: `postgres: svc <db> …`). */
function postgresBackends(database) {
  return pidsWhere('cmdline', (text) => {
    const title = text.replace(/\0/g, ' ');
    return title.startsWith('postgres: ') && title.split(' ').includes(database);
  });
}

function statFields(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU time (µs) of `pid`'s children that have ended and been reaped (cutime + cstime). */
function reapedCpu(pid) {
  try {
    const fields = statFields(pid);
    return (Number(fields[13]) + Number(fields[14])) * TICK_US;
  } catch {
    return 0;
  }
}

/**
 * CPU of the PostgreSQL backends of `database` from now until the function returned is called:
 * those alive now, those started meanwhile (the whole of their life is in the window: a pool that
 * closed idle connections between rounds opens new ones), and those ended meanwhile, which the
 * postmaster has reaped into its children's times (less what they had used before the window). The
 * last part takes in any process of the cluster that ends in the window, another database's too:
 * benches run alone.
 */
function postgresCpuFrom(database) {
  const before = cpuByPid(postgresBackends(database));
  // The cluster's postmaster: the parent of its backends and of its own processes (checkpointer…).
  const cluster = pidsWhere('cmdline', (text) => text.startsWith('postgres: '));
  let postmaster;
  for (const pid of [...before.keys(), ...cluster]) {
    try {
      postmaster = Number(statFields(pid)[1]);
      break;
    } catch {
      // gone; try the next
    }
  }
  const reapedBefore = postmaster === undefined ? 0 : reapedCpu(postmaster);
  return () => {
    const after = cpuByPid(postgresBackends(database));
    let used = 0;
    for (const [pid, us] of after) used += us - (before.get(pid) ?? 0);
    if (postmaster === undefined) return used;
    // A reaped backend brings its whole life's CPU; what it had used before the window is not ours.
    let endedBefore = 0;
    for (const [pid, us] of before) if (!after.has(pid)) endedBefore += us;
    return used + Math.max(0, reapedCpu(postmaster) - reapedBefore - endedBefore);
  };
}

/** The direct children of `pid` (an nginx master's workers). */
function childrenOf(pid) {
  return pidsWhere('stat', (stat) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid);
}

function machineTicks() {
  const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = cpu[3] + (cpu[4] ?? 0);
  return { total: cpu.reduce((a, b) => a + b, 0), idle };
}

function busySince(before) {
  const after = machineTicks();
  const total = after.total - before.total;
  return total > 0 ? Number((1 - (after.idle - before.idle) / total).toFixed(3)) : 0;
}

module.exports = {
  cpuByPid,
  cpuMicros,
  cpuSince,
  postgresBackends,
  postgresCpuFrom,
  childrenOf,
  machineTicks,
  busySince,
};
