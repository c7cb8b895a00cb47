# syntax=docker/dockerfile:1
#
# One Dockerfile for every process of the crew-record service.
#
#   Nest apps (default target `app`): one image per app, the app picked by a build arg.
#     docker build --build-arg APP=crew-api -t crew-record-service/crew-api .
#   The same image runs any app or CLI when given a command, e.g.
#     docker run ... crew-record-service/crew-api node dist/apps/crew-api/src/cli.js migrate
#
#   Gateway (nginx, configured at start from the route table in libs/contracts):
#     docker build --target gateway -t crew-record-service/gateway .

# Node 24 LTS, the one Node the service supports (engines, and what `npm test` and `npm start` run on).
# Pinned to an exact release; the release checklist in k8s/README.md adds the digest
# (node:24.x.y-bookworm-slim@sha256:...).
ARG NODE_IMAGE=node:24.22.3-bookworm-slim

# ---- build: full dependency tree, compiled output in /src/dist --------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# BuildKit cache mount: the npm cache survives between builds without landing in a layer.
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# ---- prod-deps: runtime dependencies only ------------------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund

# ---- runtime: what every process image shares --------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /src/package.json ./package.json
COPY --from=build --chown=root:root /src/dist ./dist
# The code is owned by root and read-only for the `node` user (uid 1000) that runs it.
USER node

# ---- gateway: nginx in front of the Nest apps --------------------------------------------------
FROM runtime AS gateway
USER root
# nginx's compiled-in paths (temp files, default error log, pid file) must be writable by `node`;
# Kubernetes mounts emptyDirs over them because it runs the root filesystem read-only.
RUN apt-get update \
  && apt-get install -y --no-install-recommends nginx-light \
  && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/default \
  && install -d -o node -g node /var/lib/nginx /var/log/nginx /tmp/gateway \
  && touch /run/nginx.pid && chown node:node /run/nginx.pid
# The static docs (openapi.json, openapi.yaml, docs/) that the generator copies next to nginx.conf.
COPY --from=build --chown=root:root /src/apps/gateway/static ./apps/gateway/static
USER node
ENV GATEWAY_PORT=8080 \
    GATEWAY_DIR=/tmp/gateway
EXPOSE 8080
# nginx drains open connections on SIGQUIT (SIGTERM is its fast shutdown).
STOPSIGNAL SIGQUIT
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.GATEWAY_PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["/bin/sh", "-c", "node dist/apps/gateway/src/generate.js --out \"$GATEWAY_DIR\" && exec nginx -e stderr -p \"$GATEWAY_DIR\" -c \"$GATEWAY_DIR/nginx.conf\""]

# ---- app (default target): one NestJS app, chosen by the APP build arg ---------------------------
FROM runtime AS app
ARG APP=""
ENV APP=${APP}
# The API ports, and the metrics port every app uses in Kubernetes (METRICS_PORT).
EXPOSE 3001 3002 3003 3004 3005 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Node is PID 1 and receives SIGTERM itself, so the app drains in-flight work before it exits.
CMD ["/bin/sh", "-c", "if [ -z \"$APP\" ]; then echo 'Build with --build-arg APP=<app> or pass a command, e.g. node dist/apps/crew-api/src/main.js' >&2; exit 64; fi; exec node \"dist/apps/$APP/src/main.js\""]
