#!/bin/sh
# A Sentinel: monitors the master the other Sentinels name, or redis-0 on first start. Its config
# lives in an emptyDir because Sentinel rewrites it.
set -eu
ME="$(hostname).redis-sentinel"
current_master() {
  for s in redis-sentinel-0.redis-sentinel redis-sentinel-1.redis-sentinel redis-sentinel-2.redis-sentinel; do
    [ "$s" = "$ME" ] && continue
    m=$(timeout 3 redis-cli -h "$s" -p 26379 --raw SENTINEL get-master-addr-by-name "$REDIS_SENTINEL_MASTER" 2>/dev/null | head -n 1) || true
    if [ -n "$m" ]; then echo "$m"; return; fi
  done
  echo "redis-0.redis"
}
# Sentinel refuses a master whose name does not resolve; ask again until the named one answers.
while :; do
  MASTER=$(current_master)
  timeout 3 redis-cli -h "$MASTER" -p 6379 --no-auth-warning -a "$REDIS_PASSWORD" ping >/dev/null 2>&1 && break
  echo "waiting for $MASTER"
  sleep 2
done
cat > /data/sentinel.conf <<CONF
port 26379
sentinel resolve-hostnames yes
sentinel announce-hostnames yes
sentinel announce-ip $ME
sentinel monitor $REDIS_SENTINEL_MASTER $MASTER 6379 2
sentinel auth-pass $REDIS_SENTINEL_MASTER $REDIS_PASSWORD
sentinel down-after-milliseconds $REDIS_SENTINEL_MASTER 5000
sentinel failover-timeout $REDIS_SENTINEL_MASTER 60000
sentinel parallel-syncs $REDIS_SENTINEL_MASTER 1
CONF
exec redis-server /data/sentinel.conf --sentinel
