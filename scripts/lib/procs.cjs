'use strict';
// Child processes of `npm start`, `npm test` and the e2e harness: spawned in their own process
// group (a terminal's Ctrl-C reaches only us; we stop them in order), their output either
// prefixed and coloured on our stdout or written to a log file, and stopped with SIGTERM,
// then SIGKILL after a grace period.
const fs = require('node:fs');
const { spawn, spawnSync } = require('node:child_process');

const COLOURS = [36, 32, 33, 35, 34, 96, 92, 93, 95, 94];
const useColour = () =>
  !process.env.NO_COLOR && (Boolean(process.env.FORCE_COLOR) || Boolean(process.stdout.isTTY));
const paint = (code, text) => (useColour() ? `\x1b[${code}m${text}\x1b[0m` : text);
const red = (t) => paint('1;31', t);
const green = (t) => paint('32', t);
const yellow = (t) => paint('33', t);
const bold = (t) => paint('1', t);

/** Splits a stream into lines and calls onLine for each complete one. */
function eachLine(stream, onLine) {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop();
    for (const line of parts) onLine(line.replace(/\r$/, ''));
  });
  stream.on('end', () => {
    if (rest) onLine(rest);
    rest = '';
  });
}

/**
 * Spawns a long-running child. Options:
 *   name, cmd, args, env, cwd
 *   prefix: { width, colour } – write "name | line" to our stdout
 *   logFile: path           – append the child's output there instead
 *   onExit(code, signal, child) – called when the child ends (also when we stopped it)
 * Returns a handle: { name, child, pid, alive(), stop(graceMs), exited (promise) }.
 */
function startProcess({ name, cmd, args = [], env = process.env, cwd, prefix, logFile, onExit }) {
  let out = 'inherit';
  let fd;
  if (logFile) {
    fd = fs.openSync(logFile, 'a');
    out = fd;
  } else if (prefix) {
    out = 'pipe';
  }
  let argv = [cmd, ...args];
  if (out === 'pipe') {
    // Node's stdio "pipes" are socket pairs, and a program that opens /dev/stdout (nginx's
    // access_log) cannot open a socket; a shell pipeline gives it a real pipe.
    // The exit status of the program (not of cat) is the shell's, through fd 3.
    argv = [
      '/bin/sh',
      '-c',
      'exec 4>&1; rc=$({ { "$0" "$@" 2>&1 3>&- 4>&-; echo $? >&3; } | cat >&4; } 3>&1); exit $rc',
      cmd,
      ...args,
    ];
  }
  const child = spawn(argv[0], argv.slice(1), { env, cwd, detached: true, stdio: ['ignore', out, out] });
  if (fd !== undefined) fs.closeSync(fd);
  let exitInfo;
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
    child.once('error', (err) => {
      exitInfo = { code: null, signal: null, error: err };
      resolve(exitInfo);
    });
  });
  if (prefix) {
    const label = paint(prefix.colour, `${name.padEnd(prefix.width)} |`);
    const write = (line) => process.stdout.write(`${label} ${line}\n`);
    eachLine(child.stdout, write);
    eachLine(child.stderr, write);
  }
  const handle = {
    name,
    child,
    pid: child.pid,
    exited,
    stopping: false,
    alive: () => exitInfo === undefined,
    exitInfo: () => exitInfo,
    /** SIGTERM to the child's process group, SIGKILL after graceMs; resolves when it is gone. */
    async stop(graceMs = 10000) {
      handle.stopping = true;
      if (!handle.alive()) return exitInfo;
      signalGroup(child.pid, 'SIGTERM');
      const timer = setTimeout(() => {
        if (handle.alive()) {
          process.stdout.write(
            `${yellow(`${name}: still running after ${graceMs / 1000} s, sending SIGKILL`)}\n`,
          );
          signalGroup(child.pid, 'SIGKILL');
        }
      }, graceMs);
      const info = await exited;
      // Wait for the rest of the group too (a shell's children), SIGKILL when the grace is over.
      for (let waited = 0; groupAlive(child.pid); waited += 100) {
        if (waited >= graceMs) signalGroup(child.pid, 'SIGKILL');
        await new Promise((r) => setTimeout(r, 100));
        if (waited > graceMs + 5000) break;
      }
      clearTimeout(timer);
      return info;
    },
  };
  exited.then((info) => onExit && onExit(info.code, info.signal, handle));
  return handle;
}

function groupAlive(pid) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every process below `pid`, found by parent ids in /proc (empty where there is no /proc). */
function descendants(pid) {
  const parentOf = new Map();
  let names = [];
  try {
    names = fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  for (const name of names) {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      // "pid (command) state ppid ...": the command may hold spaces and parentheses.
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone meanwhile */
    }
  }
  const found = [];
  for (let level = [pid]; level.length > 0;) {
    level = [...parentOf].filter(([, parent]) => level.includes(parent)).map(([child]) => child);
    found.push(...level);
  }
  return found;
}

function signalEach(pids, signal) {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/**
 * Runs a command to completion. Output goes to our stdout (optionally prefixed) or to logFile.
 * Resolves { code, signal, timedOut }. With timeoutMs, the process group is killed when it runs over.
 * onStart(handle) receives the process handle (to stop it from outside, e.g. on Ctrl-C).
 */
function run(cmd, args, { env = process.env, cwd, prefix, logFile, timeoutMs, onStart } = {}) {
  return new Promise((resolve) => {
    let timedOut = false;
    let timer;
    const handle = startProcess({
      name: prefix ? prefix.name : cmd,
      cmd,
      args,
      env,
      cwd,
      prefix,
      logFile,
      onExit: (code, signal) => {
        clearTimeout(timer);
        const info = handle.exitInfo();
        resolve({ code, signal, timedOut, error: info && info.error });
      },
    });
    if (onStart) onStart(handle);
    if (timeoutMs) {
      timer = setTimeout(() => {
        timedOut = true;
        process.stdout.write(
          `${red(`${cmd} ${args.join(' ')}: over ${Math.round(timeoutMs / 1000)} s, stopping it`)}\n`,
        );
        // What it started in process groups of their own (apps, a nested test run) would outlive it.
        const tree = descendants(handle.pid);
        signalEach(tree, 'SIGTERM');
        handle.stop(5000).then(() => signalEach(tree, 'SIGKILL'));
      }, timeoutMs);
    }
  });
}

/**
 * How long a supervisor waits before starting a process that died again: 1 s after the first
 * crash, doubling with every crash in a row (a crash loop), at most 30 s (a kubelet's backoff,
 * shortened for a laptop).
 */
function restartDelayMs(crashesInARow, { firstMs = 1000, maxMs = 30000 } = {}) {
  const n = Math.max(1, Math.floor(crashesInARow));
  return Math.min(firstMs * 2 ** (n - 1), maxMs);
}

/** Synchronous command, output captured; { status, stdout, stderr }. */
function capture(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { encoding: 'utf8', timeout: opts.timeoutMs ?? 60000, ...opts });
  return {
    status: res.error ? -1 : res.status,
    stdout: res.stdout || '',
    stderr: res.stderr || (res.error ? res.error.message : ''),
  };
}

/** True when `cmd` is found on PATH (or is an existing absolute path). */
function which(cmd) {
  if (cmd.includes('/')) return fs.existsSync(cmd) ? cmd : '';
  const dirs = (process.env.PATH || '').split(':').concat(['/usr/sbin', '/sbin', '/usr/local/sbin']);
  for (const dir of dirs) {
    const p = `${dir}/${cmd}`;
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return '';
}

/** Last `lines` lines of a log file (for error messages). */
function tail(file, lines = 40) {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '';
  }
}

module.exports = {
  COLOURS,
  paint,
  red,
  green,
  yellow,
  bold,
  startProcess,
  signalGroup,
  descendants,
  restartDelayMs,
  run,
  capture,
  which,
  tail,
  eachLine,
};
