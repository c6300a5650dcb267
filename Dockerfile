# syntax=docker/dockerfile:1
# Build: the Bun image compiles the single binary (server, migrations, docs assets embedded).
FROM oven/bun:1.4.5 AS build
WORKDIR /src
COPY package.json package-lock.json ./
# bun reads package-lock.json, so the image builds from the same pinned versions as npm ci;
# the build needs only runtime dependencies (the bundler is the image's own bun).
RUN bun install --production --frozen-lockfile --ignore-scripts
COPY tsconfig.json drizzle.config.ts bunfig.toml ./
COPY drizzle ./drizzle
COPY src ./src
# The same build as `npm run build` (package.json is the one place its flags live).
RUN bun run build && mkdir -p /out/data

# Run: glibc distroless (the Bun runtime inside the binary needs glibc), non-root, no shell, no curl.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/dist/arena /app/arena
COPY --from=build --chown=nonroot:nonroot /out/data /data
# Production unless told otherwise: a server reachable on 0.0.0.0 never runs as
# `local` (generated operator token, dev mailbox, `arena seed`) by accident. It
# then refuses to start until ARENA_JWT_SECRET and a custody choice are given
# (README, "Docker"); ARENA_ENV=local is an explicit choice for trying it out.
ENV ARENA_ENV=production \
    ARENA_DATA_DIR=/data \
    ARENA_HOST=0.0.0.0 \
    ARENA_PORT=8080
VOLUME ["/data"]
EXPOSE 8080
USER nonroot
# The image has no curl: the binary checks itself.
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 CMD ["/app/arena", "healthcheck"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/arena"]
CMD ["serve"]
