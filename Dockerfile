# syntax=docker/dockerfile:1
#
# pciname's gRPC name service.
#
#   docker build -t pciname:0.1.0 .
#   docker run --rm -p 50051:50051 pciname:0.1.0          # plaintext (CMD says --insecure)
#   docker run --rm pciname:0.1.0 lookup 10de:2236         # any other pciname command
#
# Every plugin release's pci.ids is fetched at build time (verified by sha256)
# into /usr/share/pciname/snapshots, so every profile works in the image
# without network access. Build arg PCINAME_SNAPSHOTS_BASE_URL fetches them
# from a mirror laid out as URL/<sha256> instead of the upstream URLs.
#
# At run time the root filesystem may be read-only: the only place pciname
# writes is its cache (PCINAME_CACHE_DIR, parsed-catalog tables; optional,
# a cache it cannot write only costs start-up time). Mount a writable volume
# there (deploy/ uses an emptyDir).
#
# TLS: override CMD, e.g. ["serve", "--tls-cert", "/tls/tls.crt", "--tls-key",
# "/tls/tls.key", "--health-listen", "[::]:50052"] (kubelet's gRPC probes
# and this HEALTHCHECK speak plaintext: point them at --health-listen).

ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim AS build
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY data ./data
COPY pciname ./pciname
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels . \
 && pip wheel --no-cache-dir --wheel-dir /wheels /wheels/pciname-*.whl

FROM python:${PYTHON_VERSION}-slim

ARG PCINAME_SNAPSHOTS_BASE_URL=""
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PCINAME_SNAPSHOTS=/usr/share/pciname/snapshots \
    PCINAME_CACHE_DIR=/var/cache/pciname

RUN groupadd --system --gid 10001 pciname \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin pciname

COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels pciname \
 && rm -rf /wheels

# Every profile's pci.ids, checked against its sha256 (the build fails if one
# cannot be fetched), then readable by everyone and owned by root.
RUN PCINAME_CACHE_DIR=/tmp/pciname-fetch pciname snapshots fetch \
        ${PCINAME_SNAPSHOTS_BASE_URL:+--base-url "$PCINAME_SNAPSHOTS_BASE_URL"} \
 && mkdir -p /usr/share/pciname \
 && mv /tmp/pciname-fetch/snapshots "$PCINAME_SNAPSHOTS" \
 && rm -rf /tmp/pciname-fetch \
 && chmod -R a+rX /usr/share/pciname \
 && mkdir -p "$PCINAME_CACHE_DIR" && chown 10001:10001 "$PCINAME_CACHE_DIR" \
 && pciname profiles -o json | python -c "import json,sys; missing=[p['name'] for p in json.load(sys.stdin) if not p['installed']]; sys.exit('not installed: ' + ', '.join(missing) if missing else 0)"

USER 10001:10001
EXPOSE 50051 9090

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["pciname", "health", "--server", "127.0.0.1:50051", "--timeout", "4"]

ENTRYPOINT ["pciname"]
CMD ["serve", "--listen", "[::]:50051", "--insecure", "--metrics-listen", "0.0.0.0:9090", "--log-format", "json"]
