'use strict';
// Makes sure the npm packages are installed before anything requires one of them.
// Node builtins only: this runs first, on a fresh clone with no node_modules.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..', '..');

/** Why node_modules must be (re)installed, or '' when it is up to date. */
function installReason() {
  const nm = path.join(ROOT, 'node_modules');
  if (!fs.existsSync(nm)) return 'node_modules is missing';
  const lock = path.join(ROOT, 'package-lock.json');
  if (!fs.existsSync(lock)) return '';
  // npm writes its hidden lockfile at the same moment as package-lock.json, so only a clearly
  // newer package-lock.json (a pull, a checkout) means the installed tree is stale.
  const hidden = path.join(nm, '.package-lock.json');
  const installedAt = fs.existsSync(hidden) ? fs.statSync(hidden).mtimeMs : fs.statSync(nm).mtimeMs;
  return fs.statSync(lock).mtimeMs > installedAt + 5000 ? 'node_modules is older than package-lock.json' : '';
}

/** Runs `npm ci` when node_modules is missing or older than package-lock.json. */
function ensureNodeModules(log = console.log) {
  const reason = installReason();
  if (!reason) {
    log('npm: node_modules up to date');
    return;
  }
  log(`npm: ${reason}; running npm ci`);
  const ci = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
  if (ci.status === 0) return;
  // Never fall back to `npm install`: it would rewrite the lock and hide the drift, and the images
  // (whose Dockerfile runs `npm ci`) would still fail to build.
  throw new Error(
    `npm ci failed (exit ${ci.status ?? ci.signal}). If it says package.json and package-lock.json are out of ` +
      'sync, run `npm install --package-lock-only` on a developer machine, review the lock diff and commit it.',
  );
}

/**
 * Why this checkout's folder cannot work, for a reason the scripts cannot fix, in one line that says
 * what to do; '' when it can. Checked before anything is installed or started.
 */
function folderProblem() {
  const run = path.join(ROOT, '.run');
  try {
    fs.mkdirSync(run, { recursive: true });
    fs.accessSync(run, fs.constants.W_OK);
  } catch (err) {
    return `cannot write ${run} (${err.code}): run as the user who owns the checkout, or clone it into a folder you can write`;
  }
  return '';
}

module.exports = { ROOT, ensureNodeModules, installReason, folderProblem };
