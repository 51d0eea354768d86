"""What HAMi makes of one container's GPU resources, per release: the checks
``lint --hami`` runs on pods and pod templates (:mod:`pciname.lint.kinds.hami`).
Each finding is (code, severity, one line, the resource name it is about).

From HAMi's code (``pkg/device/nvidia/device.go``, the release's
``GenerateResourceRequests``): ``gpumem``, ``gpumem-percentage`` and
``gpucores`` are read only inside the branch for the chart's ``resourceName``
(``nvidia.com/gpu``), so without it they ask for nothing; with neither
``gpumem`` nor ``gpumem-percentage`` and the chart's ``defaultMemory`` of 0
the request is for 100 per cent of each GPU's memory. The scheduler
(``pkg/scheduler/score.go`` to v2.5.x, ``pkg/device/nvidia/device.go`` from
v2.6.0: Project-HAMi/HAMi v2.4.0 03e6a137 score.go:95-103, v2.8.1 713ad310
device.go:793-803) logs "core limit can't exceed 100" and takes a ``gpucores``
above 100 as 100, which asks for the GPU exclusively (device.go:820), and
takes ``gpumem`` when given, ignoring ``gpumem-percentage``. A negative
``gpucores`` is not checked there (inferred: nothing in that code refuses it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pciname.hami.releases import Release

ERROR = "error"
WARNING = "warning"
NOTE = "note"

#: Every name HAMi reads starts so (its chart's resourceName and the names after it).
NAME_PREFIX = "nvidia.com/gpu"


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    message: str
    #: The resource name the finding is about (the key lint points at).
    name: str = ""


def _integer(value: str) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _unknown_names(release: Release, names: list[str]) -> list[Finding]:
    chart = release.names.all()
    return [
        Finding(
            "hami-unknown-name",
            ERROR,
            f"{name}: not a name HAMi {release.release} registers (its chart's: {', '.join(chart[:4])})",
            name,
        )
        for name in names
        if name.lower().startswith(NAME_PREFIX) and name not in chart
    ]


def _cores(release: Release, value: str | None) -> list[Finding]:
    if value is None:
        return []
    cores = _integer(value)
    if cores is None or not 0 <= cores <= 100:
        message = f"{release.names.cores}: {value!r} is not a per cent from 0 to 100" + (
            ": HAMi's scheduler takes it as 100, the whole GPU exclusively" if cores is not None and cores > 100 else ""
        )
        return [Finding("hami-cores-range", ERROR, message, release.names.cores)]
    return []


def check_container(
    release: Release, resources: Mapping[str, str], *, gpus_per_node: int | None = None, in_vm: bool = False
) -> list[Finding]:
    """The findings for one container's resources (limits over requests, as HAMi reads them)."""
    names = release.names
    findings = _unknown_names(release, list(resources))
    hami = [n for n in (names.memory, names.memory_percentage, names.cores) if n in resources]
    if in_vm and (hami or names.gpu in resources):
        findings.append(
            Finding(
                "hami-in-vm",
                ERROR,
                f"{', '.join(hami or [names.gpu])}: HAMi serves pods, not KubeVirt VMs",
                (hami or [names.gpu])[0],
            )
        )
    findings += _cores(release, resources.get(names.cores))
    if names.memory in resources and names.memory_percentage in resources and names.gpu in resources:
        findings.append(
            Finding(
                "hami-mem-and-percentage",
                WARNING,
                f"{names.memory} and {names.memory_percentage} both given: HAMi takes {names.memory} and ignores "
                f"{names.memory_percentage}",
                names.memory_percentage,
            )
        )
    if names.gpu not in resources:
        if hami:
            findings.append(
                Finding(
                    "hami-without-gpu",
                    ERROR,
                    f"{', '.join(hami)} without {names.gpu}: HAMi reads them only with it",
                    hami[0],
                )
            )
        return findings
    if names.memory not in resources and names.memory_percentage not in resources and not release.default_memory_mb:
        findings.append(
            Finding(
                "hami-whole-memory",
                NOTE,
                f"no {names.memory}: HAMi {release.release} gives this container every requested GPU's whole memory",
                names.gpu,
            )
        )
    count = _integer(resources[names.gpu])
    if count is not None and gpus_per_node is not None and count > gpus_per_node * release.split_count:
        findings.append(
            Finding(
                "hami-count",
                ERROR,
                f"{names.gpu}: {count} is more than a node with {gpus_per_node} GPUs advertises "
                f"({gpus_per_node} x deviceSplitCount {release.split_count})",
                names.gpu,
            )
        )
    return findings
