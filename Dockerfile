# syntax=docker/dockerfile:1
# The service's image: Node 24 (the version the project brings), only runtime dependencies, non-root.
# Build: docker build -t lead-intake .   (see docs/sre.md; test/e2e/deploy.test.ts runs the same
# install steps and commands in a clean directory, since no image registry is reachable in CI).

# Stage 1: every dependency, to bundle src/ into dist/ (rolldown is a dev dependency).
FROM node:24-bookworm-slim AS build
WORKDIR /build
COPY package.json package-lock.json ./
COPY bin ./bin
COPY scripts/build.ts ./scripts/build.ts
COPY src ./src
COPY migrations ./migrations
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
RUN npm run build

# Stage 2: runtime dependencies only, the bundle, and the files the code reads at run time.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    LEAD_INTAKE_ENTRY=dist \
    HOST=0.0.0.0 \
    ADMIN_HOST=0.0.0.0 \
    HEALTH_PORT=8082
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
COPY scripts/build.ts ./scripts/build.ts
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund
COPY src ./src
COPY migrations ./migrations
COPY docs/webhooks.md ./docs/webhooks.md
COPY --from=build /build/dist ./dist
USER node
EXPOSE 8080 8081 8082
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.HEALTH_PORT || 8082}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/app/bin/lead-intake.js"]
CMD ["serve"]
