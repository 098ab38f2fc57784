# syntax=docker/dockerfile:1
#
# a2a-probe container image.
#
#   docker build -t a2a-probe:0.1.0 .
#   docker run --rm -p 9470:9470 --read-only \
#     -v "$PWD/config/minimal.yaml:/etc/a2a-probe/config.yaml:ro" a2a-probe:0.1.0
#
# The config is read from /etc/a2a-probe/config.yaml (A2A_PROBE_CONFIG_FILE); the image ships one with no agents.
# Credentials are references in that file to mounted files (/var/run/secrets/a2a/...) or environment variables.
# The process runs as uid/gid 10001, writes nothing at runtime (read-only root filesystem) and listens on 9470.

# ---- builder: the wheel of this project, then a virtualenv holding it and its dependencies -----------------------
FROM python:3.11-slim-bookworm AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY probe/ probe/

# Every dependency ships manylinux wheels, so no compiler is needed even here. The image carries the grpc extra,
# so a daemon in it probes gRPC interfaces too.
RUN pip wheel --no-cache-dir --wheel-dir /wheels '.[grpc]' \
    && python -m venv --without-pip /opt/a2a-probe \
    && pip --python /opt/a2a-probe/bin/python install --no-cache-dir --no-index --find-links /wheels 'a2a-probe[grpc]==0.1.0' \
    && mkdir -p /rootfs/etc/a2a-probe \
    && printf '%s\n' '# No agents: mount your config here (docs/daemon.md).' 'agents: []' \
        > /rootfs/etc/a2a-probe/config.yaml

# ---- runtime: the slim Python image, the virtualenv and nothing else -------------------------------------------
FROM python:3.11-slim-bookworm

ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
ARG SOURCE=unknown

LABEL org.opencontainers.image.title="a2a-probe" \
      org.opencontainers.image.description="Continuous end-to-end probing of A2A agents: discover, validate, invoke, stream; Prometheus metrics and conformance reports" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="docker.io/library/python:3.11-slim-bookworm"

RUN groupadd --system --gid 10001 a2a-probe \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin a2a-probe

COPY --from=builder /opt/a2a-probe /opt/a2a-probe
COPY --from=builder /rootfs/etc/a2a-probe /etc/a2a-probe

ENV PATH=/opt/a2a-probe/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    A2A_PROBE_CONFIG_FILE=/etc/a2a-probe/config.yaml \
    A2A_PROBE_LISTEN_ADDRESS=0.0.0.0:9470 \
    A2A_PROBE_LOG_FORMAT=json

USER 10001:10001
WORKDIR /
EXPOSE 9470

# Liveness over the standard library only (the image has no curl); follows A2A_PROBE_LISTEN_ADDRESS's port.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; port = os.environ.get('A2A_PROBE_LISTEN_ADDRESS', ':9470').rpartition(':')[2]; urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=4)"]

ENTRYPOINT ["a2a-probe"]
CMD ["run"]
