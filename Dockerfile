# syntax=docker/dockerfile:1
#
# pciname's gRPC name service.
#
#   tools/build_image.sh                           # docker build -t pciname:VERSION (and :latest)
#   docker run --rm -p 50051:50051 pciname          # plaintext (CMD says --insecure)
#   docker run --rm pciname lookup 10de:2236        # any other pciname command
#
# VERSION is pciname/_version.py's, written nowhere else: tools/build_image.sh
# reads it and passes it as PCINAME_VERSION, the image's
# org.opencontainers.image.version (a plain `docker build .` leaves that
# label empty; a PCINAME_VERSION other than the wheel's fails the build).
#
# The dependencies are installed from requirements.lock, each release pinned
# with the sha256 of its files (pip --require-hashes): a rebuild installs
# the very files the lock names. Its first lines give the command that
# refreshes it.
#
# The build downloads nothing but the base image and PyPI packages: every
# plugin release's pci.ids ships inside the pciname wheel
# (data/snapshots.tar.xz, verified by sha256 on every read), so every profile
# works in the image without network access.
#
# At run time the root filesystem may be read-only. pciname reads its data
# from the installed package, in memory; the only place it writes is its
# cache (PCINAME_CACHE_DIR: parsed-catalog tables, optional). Mount a writable
# volume there (deploy/ uses an emptyDir) to save the parse at each start;
# without one, every process parses in memory and answers the same.
#
# Metrics: the default CMD serves them on 127.0.0.1:9090, inside the
# container only (unauthenticated, so never on every interface by default).
# To publish them, override CMD with the address to listen on: deploy/ passes
# "--metrics-listen=$(POD_IP):9090" (the pod's own IP), and
#   docker run --rm -p 9090:9090 pciname serve --listen "[::]:50051" \
#       --insecure --health-listen "[::]:50052" --metrics-listen 0.0.0.0:9090
# publishes them on purpose.
#
# TLS: override CMD, e.g. ["serve", "--tls-cert", "/tls/tls.crt", "--tls-key",
# "/tls/tls.key", "--health-listen", "[::]:50052"] (kubelet's gRPC probes
# and this HEALTHCHECK speak plaintext, and ask --health-listen: a server of
# its own, which no load on the gRPC port holds up).

# The base image names its Debian release (bookworm), so a rebuild does not
# move to another one when the python image's default does. PCINAME_SOURCE
# is the URL of the source repository for org.opencontainers.image.source
# (none is known here: pass yours, --build-arg PCINAME_SOURCE=URL).
ARG PYTHON_VERSION=3.11
ARG PCINAME_VERSION=""
ARG PCINAME_SOURCE=""

FROM python:${PYTHON_VERSION}-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY data ./data
COPY pciname ./pciname
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:${PYTHON_VERSION}-slim-bookworm
ARG PCINAME_VERSION
ARG PCINAME_SOURCE

LABEL org.opencontainers.image.title="pciname" \
      org.opencontainers.image.description="Exact GPU resource names of NVIDIA's KubeVirt device plugin / GPU Operator, from the PCI IDs database" \
      org.opencontainers.image.version="${PCINAME_VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="${PCINAME_SOURCE}"

ENV PYTHONUNBUFFERED=1 \
    PCINAME_CACHE_DIR=/var/cache/pciname

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

RUN groupadd --system --gid 10001 pciname \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin pciname

COPY requirements.lock /tmp/requirements.lock
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --require-hashes -r /tmp/requirements.lock \
 && pip install --no-cache-dir --no-index --no-deps /wheels/pciname-*.whl \
 && pip check \
 && installed="$(pciname --version)" \
 && { [ -z "$PCINAME_VERSION" ] || [ "$installed" = "pciname $PCINAME_VERSION" ] \
      || { echo "PCINAME_VERSION=$PCINAME_VERSION, but the wheel is $installed" >&2; exit 1; }; } \
 && rm -rf /wheels /tmp/requirements.lock \
 && mkdir -p "$PCINAME_CACHE_DIR" && chown 10001:10001 "$PCINAME_CACHE_DIR" \
 && pciname profiles -o json | python -c "import json,sys; missing=[p['name'] for p in json.load(sys.stdin) if not p['installed']]; sys.exit('not installed: ' + ', '.join(missing) if missing else 0)" \
 && test "$(pciname lookup 10de:2330 --profile gpu-operator@v23.9.2)" = nvidia.com/GH100H100_SXM5_80GB

USER 10001:10001
EXPOSE 50051 50052

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["pciname", "health", "--server", "127.0.0.1:50052", "--timeout", "4"]

ENTRYPOINT ["pciname"]
CMD ["serve", "--listen", "[::]:50051", "--insecure", "--health-listen", "[::]:50052", "--metrics-listen", "127.0.0.1:9090", "--log-format", "json"]
