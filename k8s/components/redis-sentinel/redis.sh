#!/bin/sh
# A Redis data pod: the master if no Sentinel knows one yet and this is redis-0 (first start),
# otherwise a replica of whatever master the Sentinels name. Sentinel reconfigures it on failover.
set -eu
ME="$(hostname).redis"
MASTER=""
for s in redis-sentinel-0.redis-sentinel redis-sentinel-1.redis-sentinel redis-sentinel-2.redis-sentinel; do
  MASTER=$(timeout 3 redis-cli -h "$s" -p 26379 --raw SENTINEL get-master-addr-by-name "$REDIS_SENTINEL_MASTER" 2>/dev/null | head -n 1) || true
  [ -n "$MASTER" ] && break
done
[ -n "$MASTER" ] || MASTER="redis-0.redis"
set -- redis-server --port 6379 \
  --requirepass "$REDIS_PASSWORD" --masterauth "$REDIS_PASSWORD" \
  --replica-announce-ip "$ME" \
  --save "" --appendonly no --maxmemory 200mb --maxmemory-policy noeviction
if [ "$MASTER" != "$ME" ]; then
  echo "starting as a replica of $MASTER"
  set -- "$@" --replicaof "$MASTER" 6379
else
  echo "starting as the master"
fi
exec "$@"
