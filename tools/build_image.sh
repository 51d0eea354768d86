#!/usr/bin/env bash
# Build the container image as pciname:VERSION and pciname:latest, VERSION
# being pciname/_version.py's (written nowhere else), which it also passes as
# the image's org.opencontainers.image.version. Other arguments go to
# `docker build` (e.g. --build-arg PCINAME_SOURCE=URL, -t REGISTRY/pciname:VERSION).
#
#   tools/build_image.sh [DOCKER BUILD OPTIONS...]
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(python3 -c 'import ast, sys; print(ast.literal_eval(open("pciname/_version.py").read().split("__version__ = ", 1)[1].split("\n", 1)[0]))')
exec docker build --build-arg PCINAME_VERSION="$version" -t "pciname:$version" -t pciname:latest "$@" .
