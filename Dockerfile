# feedsync runs its TypeScript through tsx (a runtime dependency), so the image needs no build step.
FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
COPY fixtures ./fixtures
# The embedded emulator and the state file (when no Redis) write beside the config.
RUN mkdir -p /app/fixtures/.feedsync && chown -R node:node /app/fixtures/.feedsync
USER node
EXPOSE 9464 8787
ENTRYPOINT ["node", "bin/feedsync.js"]
CMD ["worker", "--config", "/app/fixtures/compose.yaml", "--port", "9464"]
