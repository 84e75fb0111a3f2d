# Two stages: the first compiles the TypeScript into dist/ (it has the dev dependencies: typescript),
# the second runs the compiled JavaScript with the production dependencies only: no compiler, no
# tsx, no sources. bin/feedsync.js runs dist/ when it is there.
# Node 24 is the current LTS; the tag is pinned to a patch release and Debian release so a rebuild
# gives the same runtime (raise it on purpose, with the test suite).
FROM node:24.11.1-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# (npm ci runs the prepare script, scripts/build.js --prepare: with no src/ yet it builds nothing)
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY jobs ./jobs
RUN npm run build

FROM node:24.11.1-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# Node 24 sizes the young generation from the machine's memory: on a 24 GB host a 100k no-change
# rerun peaked at 434 MB with its default and 369 MB with 16 MB semi-spaces, at no more CPU (one
# run each, docs/benchmarks.md "On Node 24"). A NODE_OPTIONS given at `docker run` replaces this.
ENV NODE_OPTIONS=--max-semi-space-size=16
COPY package.json package-lock.json ./
# (the prepare script, without typescript here, builds nothing: dist/ comes from the first stage)
COPY scripts/build.js ./scripts/build.js
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY --from=build /app/dist ./dist
COPY fixtures ./fixtures
# The embedded emulator and the state file (when no Redis) write beside the config; /data is where
# the emulator service keeps its listings (a volume in docker-compose.yml); /config is where your
# own config is mounted.
RUN mkdir -p /app/fixtures/.feedsync /data /config && chown -R node:node /app/fixtures/.feedsync /data
USER node
EXPOSE 9464 8787
# The worker's /healthz: 200 when Redis answers and the workers run. Other commands (the emulator)
# set their own check in compose. FEEDSYNC_HEALTH_URL changes what is checked.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.FEEDSYNC_HEALTH_URL||'http://127.0.0.1:9464/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "bin/feedsync.js"]
CMD ["worker", "--config", "/app/fixtures/compose.yaml", "--port", "9464"]
