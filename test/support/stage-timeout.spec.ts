import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { descendants, run } from '../../scripts/lib/procs.cjs';

/**
 * A stage of `npm test` over its time limit is stopped with everything it started, also what runs
 * in process groups of its own (the apps a suite starts, a nested test run): left running, they
 * would load the machine through every later stage.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a stage over its time limit', () => {
  it('finds the processes below one, those in groups of their own included', async () => {
    const shell = spawn('sh', ['-c', 'sleep 60 & sleep 61'], { detached: true, stdio: 'ignore' });
    try {
      // The shell needs a moment to start both (longer on a loaded machine).
      for (let i = 0; i < 50 && descendants(shell.pid!).length < 2; i++) await sleep(100);
      expect(descendants(shell.pid!)).toHaveLength(2);
      expect(descendants(process.pid)).toContain(shell.pid);
    } finally {
      process.kill(-shell.pid!, 'SIGKILL');
    }
  });

  it('is stopped with what it started in a process group of its own', async () => {
    // The stage starts a child in a new session (as the e2e harness starts apps) and prints its pid.
    const script =
      "const c = require('child_process').spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });" +
      "require('fs').writeFileSync(process.argv[1], String(c.pid)); setInterval(() => {}, 1000);";
    const pidFile = path.join(os.tmpdir(), `stage-timeout-${process.pid}`);
    const res = await run(process.execPath, ['-e', script, pidFile], {
      timeoutMs: 5000,
      logFile: '/dev/null',
    });
    expect(res.timedOut).toBe(true);
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    fs.rmSync(pidFile, { force: true });
    for (let i = 0; i < 50 && alive(grandchild); i++) await sleep(100);
    expect(alive(grandchild)).toBe(false);
  }, 30_000);
});
