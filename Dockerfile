# The image is the package a user installs: the first stage packs it (`npm pack`: its prepack script
# builds dist/ from the sources), the second unpacks that same tarball into /app and installs its
# production dependencies from the lockfile: no compiler, no tsx, no sources, no tests.
# bin/feedsync.js of a package runs only its build.
# The Node is the newest supported line (package.json "engines"), the one .ci/run runs every test on
# (FULL_NODE; test/release/support.test.ts holds them equal). The tag is pinned to a patch release
# and Debian release so a rebuild gives the same runtime (raise it on purpose, with the test suite).
FROM node:24.11.1-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# (npm ci runs the prepare script, scripts/build.js --prepare: with no src/ yet it builds nothing)
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md LICENSE CHANGELOG.md ./
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
RUN mkdir /pkg && npm pack --silent --pack-destination /pkg && mv /pkg/feedsync-*.tgz /pkg/feedsync.tgz

FROM node:24.11.1-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# Node 24 sizes the young generation from the machine's memory: on a 24 GB host a 100k no-change
# rerun peaked at 434 MB with its default and 369 MB with 16 MB semi-spaces, at no more CPU (one
# run each, docs/benchmarks.md "On Node 24"). A NODE_OPTIONS given at `docker run` replaces this.
ENV NODE_OPTIONS=--max-semi-space-size=16
COPY --from=build /pkg/feedsync.tgz /tmp/feedsync.tgz
RUN tar -xzf /tmp/feedsync.tgz --strip-components=1 -C /app && rm /tmp/feedsync.tgz
COPY package-lock.json ./
# (npm ci runs the package's prepare script: scripts/build.js finds no src/ and builds nothing; dist/
# is the tarball's)
COPY scripts/build.js ./scripts/build.js
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force && rm -r scripts \
  && ln -s /app/bin/feedsync.js /usr/local/bin/feedsync
COPY fixtures ./fixtures
# The embedded emulator and the state file (when no Redis) write beside the config; /data is where
# the emulator service keeps its listings (a volume in docker-compose.yml); /config is where your
# own config is mounted.
RUN mkdir -p /app/fixtures/.feedsync /data /config && chown -R node:node /app/fixtures/.feedsync /data
USER node
# 9464: the worker's /healthz, /status, /ui, /metrics; 9465: the push listener (RESO RCP-028), only when a
# feed has `push` and `push.host` is 0.0.0.0 in the container (its default, 127.0.0.1, is not reachable from outside);
# 8787: the emulator service.
EXPOSE 9464 9465 8787
# The worker's /healthz: 200 when Redis answers and the workers run. Other commands (the emulator)
# set their own check in compose. FEEDSYNC_HEALTH_URL changes what is checked.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.FEEDSYNC_HEALTH_URL||'http://127.0.0.1:9464/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "/app/bin/feedsync.js"]
CMD ["worker", "--config", "/app/fixtures/compose.yaml", "--port", "9464"]
