# Builds the single gw executable and ships it alone on a slim Debian base.
FROM oven/bun:1.4.5 AS build
WORKDIR /src
COPY package.json bun.lock bunfig.toml ./
RUN bun install --frozen-lockfile
COPY . .
RUN bun run build

FROM debian:12-slim
RUN useradd --system --uid 10001 --home-dir /data gw && mkdir -p /data && chown gw /data
COPY --from=build /src/dist/gw /usr/local/bin/gw
USER gw
WORKDIR /data
ENV GW_HOST=0.0.0.0 GW_DATA_DIR=/data
VOLUME /data
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=3s CMD ["/usr/local/bin/gw", "--version"]
ENTRYPOINT ["/usr/local/bin/gw"]
CMD ["serve"]
