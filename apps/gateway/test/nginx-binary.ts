import { existsSync } from 'node:fs';

/** The nginx the gateway's tests run: NGINX_BIN, else Debian's /usr/sbin/nginx, else `nginx` on PATH. */
export function nginxBinary(): string {
  if (process.env.NGINX_BIN) return process.env.NGINX_BIN;
  return existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
}
