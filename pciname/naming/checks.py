"""Where a resource name goes, and the ways a "right" name still fails.

docs/naming.md sections 1 and 5: the plugin registers ``nvidia.com/<name>`` on
socket ``/var/lib/kubelet/device-plugins/kubevirt-<name>.sock``; KubeVirt
reads ``PCI_RESOURCE_<...>``. kubelet refuses names that are not qualified
names, a unix socket path has at most 107 bytes, and two device ids with one
name share one socket and resource.
"""

from __future__ import annotations

import re
from collections import namedtuple
from collections.abc import Iterable, Mapping

RESOURCE_DOMAIN = "nvidia.com"
#: The plugin family a resolution's names are those of, unless Kata's.
KUBEVIRT_PLUGIN = "kubevirt-gpu-device-plugin"
DEVICE_PLUGIN_DIR = "/var/lib/kubelet/device-plugins/"
SOCKET_PATH_MAX_BYTES = 107  # sizeof(sun_path) - 1 on Linux
NAME_PART_MAX = 63

_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_MDEV_SPACES = re.compile(r"[\t\n\f\r ]+")  # Go regexp \s

# Stable warning codes.
INVALID_RESOURCE_NAME = "invalid-resource-name"
SOCKET_PATH_TOO_LONG = "socket-path-too-long"
NAME_COLLISION = "name-collision"
UNNAMED_DEVICE = "unnamed-device"
NOT_ADVERTISED = "not-advertised"
#: The Kata plugin: every device of one kind is advertised under one alias.
SHARED_ALIAS = "shared-alias"
#: The Kata plugin: whether it takes the device depends on its PCI class,
#: which an id alone does not give (inferred from the pci.ids name).
CLASS_INFERRED = "class-inferred"
#: The whole-file algorithms (plugin v1.0.0 to v1.2.1): the name comes from
#: a line in another vendor's section of pci.ids. It is the name that
#: release advertises; the message says where it comes from.
NAME_FROM_ANOTHER_VENDOR = "name-from-another-vendor"
#: The plugin panics (a v1.0.x plugin on a vGPU type name without a space),
#: so nothing at all is advertised on a node where it happens.
PLUGIN_CRASH = "plugin-crash"


class NameWarning(namedtuple("NameWarning", "code message")):
    """A reason a resource name may not work, with a stable ``code``.

    (Called ``Warning`` before 0.3, which shadowed the builtin; ``pciname.Warning``
    stays as a deprecated alias for one release.)"""

    __slots__ = ()

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


#: Codes after which the plugin's resource never reaches kubelet's node
#: status: a name with one of them will not work on any node.
BLOCKING_CODES = frozenset((NOT_ADVERTISED, INVALID_RESOURCE_NAME, SOCKET_PATH_TOO_LONG, PLUGIN_CRASH))


def is_advertised(resource: str | None, codes: Iterable[str]) -> bool:
    """Whether a node will really show ``resource``, given the warnings."""
    return resource is not None and BLOCKING_CODES.isdisjoint(codes)


def resource_name(name: str) -> str:
    return f"{RESOURCE_DOMAIN}/{name}"


def reverse_query(resource: str) -> str:
    """The resource name a reverse look-up (library, CLI and gRPC alike) asks
    for: surrounding blanks removed, since no advertised name has any (the
    plugin keeps only ``[A-Za-z0-9_.]`` of a PCI name and turns white space
    into ``_`` in a vGPU type's), and ``nvidia.com/`` put before a bare name.
    ``""`` for a blank one."""
    wanted = resource.strip()
    if not wanted or "/" in wanted:
        return wanted
    return resource_name(wanted)


def socket_path(name: str) -> str:
    return f"{DEVICE_PLUGIN_DIR}kubevirt-{name}.sock"


def env_var(resource: str, *, mediated: bool = False) -> str:
    """The variable KubeVirt reads the device addresses from."""
    prefix = "MDEV_PCI_RESOURCE_" if mediated else "PCI_RESOURCE_"
    return prefix + resource.upper().replace("/", "_").replace(".", "_")


def whitespace_runs_to_underscore(text: str) -> str:
    """Every run of Go RE2 ``\\s`` (``[\\t\\n\\f\\r ]``) to ``_``."""
    return _MDEV_SPACES.sub("_", text)


def mdev_resource_name(type_name: str) -> str:
    """``mdev_type/name`` -> resource by the v1.1.x-and-later rule: newlines
    dropped from both ends, white-space runs (Go ``\\s``) to ``_``, no
    upper-casing. The rule of a given release (v1.0.x differs) is
    :func:`pciname.naming.mdev.mdev_resource`."""
    return resource_name(whitespace_runs_to_underscore(type_name.strip("\n")))


def name_part_problem(name: str) -> str | None:
    """Why kubelet refuses ``nvidia.com/<name>``, or None if it accepts it."""
    if not name:
        return "the name part is empty"
    if len(name) > NAME_PART_MAX:
        return f"the name part has {len(name)} characters, more than the {NAME_PART_MAX} kubelet allows"
    if not _NAME_PART.match(name):
        bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c in "-_."))})
        if bad:
            return f"the name part contains {''.join(bad)!r}; only letters, digits, '-', '_' and '.' are allowed"
        if not name[0].isalnum():
            return f"the name part begins with {name[0]!r}; it must begin with a letter or digit"
        return f"the name part ends with {name[-1]!r}; it must end with a letter or digit"
    return None


def name_warnings(name: str, socket: str | None = None) -> list[NameWarning]:
    """kubelet validity and socket length of an advertised ``name`` (its
    socket: the KubeVirt plugin's unless ``socket`` is given)."""
    found = []
    problem = name_part_problem(name)
    if problem:
        found.append(
            NameWarning(
                INVALID_RESOURCE_NAME,
                f"kubelet refuses {resource_name(name)}: {problem}; the plugin's registration fails "
                "and the GPU is never advertised",
            )
        )
    path = socket_path(name) if socket is None else socket
    size = len(path.encode("utf-8", "surrogateescape"))
    if size > SOCKET_PATH_MAX_BYTES:
        found.append(
            NameWarning(
                SOCKET_PATH_TOO_LONG,
                f"plugin socket {path} is {size} bytes, more than the {SOCKET_PATH_MAX_BYTES} a unix socket "
                "path may have; the plugin cannot create it",
            )
        )
    return found


def collisions(resources: Mapping[str, str | None]) -> dict[str, list[str]]:
    """resource -> sorted device ids, for resources more than one id shares."""
    by_resource: dict[str, list[str]] = {}
    for device_id, resource in resources.items():
        if resource is not None:
            by_resource.setdefault(resource, []).append(device_id)
    return {r: sorted(ids) for r, ids in by_resource.items() if len(ids) > 1}


def collision_warning(device_id: str, resource: str, sharing: Iterable[str]) -> NameWarning | None:
    others = [other for other in sharing if other != device_id]
    if not others:
        return None
    listed = ", ".join(f"10de:{other}" for other in others)
    return NameWarning(
        NAME_COLLISION,
        f"{resource} is also the name of {listed} in this profile; on a node with both, "
        "the plugins share one socket and only one of them is advertised",
    )
