"""Results: what pciname answers, as typed values (a leaf: the engine and the
API both build them, and they import nothing above the naming rules).

* :class:`Resolution`: one device under one profile;
* :class:`DiffEntry`: one device whose resource differs between profiles;
* :class:`ProfileInfo`: one profile, its release and its pci.ids file.

Each has ``to_dict()``, the plain-data form JSON, YAML and the gRPC service
carry (a *record*, :data:`Record`, is a Resolution's). Each behaves as a
frozen slotted dataclass in every way callers see, but is written out:
importing :mod:`dataclasses` costs as much as ``python -c pass`` at a fresh
``pciname.resolve()``, so it is imported only when asked for.
"""

from __future__ import annotations

from pciname.naming import checks
from pciname.naming.checks import NameWarning

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from typing import Any, ClassVar

    #: One device's resolution as plain data: :meth:`Resolution.to_dict`'s shape.
    Record = dict[str, Any]
else:
    Record = dict  # dict[str, Any] to type checkers

__all__ = ["DiffEntry", "ProfileInfo", "Record", "Resolution"]


class _DataclassFields:
    """A class's ``__dataclass_fields__``, made by :mod:`dataclasses` when first asked for."""

    def __get__(self, instance: object, owner: type[_Frozen]) -> dict[str, Any]:
        import dataclasses

        spec: list[Any] = [
            (name, owner.__annotations__[name], dataclasses.field(default=owner._defaults[name]))
            if name in owner._defaults
            else (name, owner.__annotations__[name])
            for name in owner._fields
        ]
        made = dataclasses.make_dataclass(owner.__name__, spec, frozen=True)
        fields: dict[str, Any] = getattr(made, "__dataclass_fields__")  # noqa: B009 - mypy cannot type it
        type.__setattr__(owner, "__dataclass_fields__", fields)  # from now on, a plain class attribute
        return fields


def _frozen(name: str, what: str = "assign to") -> Exception:
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(f"cannot {what} field {name!r}")


class _Frozen:
    """What ``@dataclass(frozen=True, slots=True)`` adds, for the fields
    named in ``_fields`` (each subclass writes its ``__init__``)."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, object]] = {}
    __dataclass_fields__: ClassVar[Any] = _DataclassFields()

    def _values(self) -> tuple[object, ...]:
        return tuple([getattr(self, name) for name in self._fields])

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in self._fields)})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: object) -> None:
        raise _frozen(name)

    def __delattr__(self, name: str) -> None:
        raise _frozen(name, "delete")

    def __getstate__(self) -> list[object]:
        return list(self._values())

    def __setstate__(self, state: list[object]) -> None:
        for name, value in zip(self._fields, state):
            object.__setattr__(self, name, value)

    def _init(self, values: dict[str, Any]) -> None:
        """Set each field from ``values`` (the ``__init__``'s locals)."""
        self.__setstate__([values[name] for name in self._fields])


class Resolution(_Frozen):
    """What a profile makes of one PCI device.

    ``resource_name`` is what the plugin registers with kubelet (None: it
    advertises nothing for this device); ``name`` is the name the plugin
    derived from pci.ids (``""``: none, so v1.0.1+ fall back to the id).
    ``advertised`` is False also when kubelet would refuse the name.
    ``plugin`` is the plugin family (``kubevirt-gpu-device-plugin``, or
    ``sandbox-device-plugin`` for Kata), ``alias`` the Kata alias the device
    is advertised under (None: its own name; always None for KubeVirt).
    """

    __match_args__ = (
        "device",
        "profile",
        "algorithm",
        "plugin_release",
        "name",
        "resource_name",
        "vendor_name",
        "device_name",
        "pci_ids_version",
        "pci_ids_sha256",
        "env_var",
        "socket_path",
        "plugin",
        "alias",
        "warnings",
    )
    __slots__ = _fields = __match_args__
    # read-only; typing.ClassVar would cost start-up time
    _defaults = {"plugin": checks.KUBEVIRT_PLUGIN, "alias": None, "warnings": ()}  # noqa: RUF012

    device: str
    profile: str
    algorithm: str
    plugin_release: str | None
    name: str
    resource_name: str | None
    vendor_name: str | None
    device_name: str | None
    pci_ids_version: str | None
    pci_ids_sha256: str | None
    env_var: str | None
    socket_path: str | None
    plugin: str
    alias: str | None
    warnings: tuple[NameWarning, ...]

    def __init__(
        self,
        device: str,
        profile: str,
        algorithm: str,
        plugin_release: str | None,
        name: str,
        resource_name: str | None,
        vendor_name: str | None,
        device_name: str | None,
        pci_ids_version: str | None,
        pci_ids_sha256: str | None,
        env_var: str | None,
        socket_path: str | None,
        plugin: str = checks.KUBEVIRT_PLUGIN,
        alias: str | None = None,
        warnings: tuple[NameWarning, ...] = (),
    ) -> None:
        self._init(locals())

    @classmethod
    def from_record(cls, record: Record) -> Resolution:
        """From the engine's plain-data form (:meth:`to_dict`'s shape)."""
        fields = {k: v for k, v in record.items() if k not in ("advertised", "warnings")}
        return cls(**fields, warnings=tuple(NameWarning(w["code"], w["message"]) for w in record["warnings"]))

    @property
    def advertised(self) -> bool:
        return checks.is_advertised(self.resource_name, self.warning_codes)

    @property
    def warning_codes(self) -> tuple[str, ...]:
        return tuple(w.code for w in self.warnings)

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name in self._fields:
            found[name] = getattr(self, name)
            if name == "resource_name":
                found["advertised"] = self.advertised
        found["warnings"] = [w.to_dict() for w in self.warnings]
        return found


class DiffEntry(_Frozen):
    """One device whose resource differs between two profiles."""

    __match_args__ = ("device", "old", "new")
    __slots__ = _fields = __match_args__

    device: str
    old: str | None
    new: str | None

    def __init__(self, device: str, old: str | None, new: str | None) -> None:
        self._init(locals())

    @property
    def change(self) -> str:
        if self.old is None:
            return "appears"
        if self.new is None:
            return "vanishes"
        return "renamed"

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "change": self.change, "old": self.old, "new": self.new}


class ProfileInfo(_Frozen):
    """One profile: its release, algorithm and pci.ids file, and whether that
    file is installed; ``plugin`` its plugin family, ``source`` the
    repository and commit its release facts come from (Kata profiles)."""

    __match_args__ = (
        "name",
        "kind",
        "released",
        "algorithm",
        "plugin_release",
        "pci_ids_version",
        "pci_ids_sha256",
        "installed",
        "path",
        "aliases",
        "note",
        "plugin",
        "source",
    )
    __slots__ = _fields = __match_args__
    _defaults = {"plugin": checks.KUBEVIRT_PLUGIN, "source": None}  # noqa: RUF012

    name: str
    kind: str
    released: str | None
    algorithm: str
    plugin_release: str | None
    pci_ids_version: str | None
    pci_ids_sha256: str | None
    installed: bool
    path: str | None
    aliases: tuple[str, ...]
    note: str
    plugin: str
    source: str | None

    def __init__(
        self,
        name: str,
        kind: str,
        released: str | None,
        algorithm: str,
        plugin_release: str | None,
        pci_ids_version: str | None,
        pci_ids_sha256: str | None,
        installed: bool,
        path: str | None,
        aliases: tuple[str, ...],
        note: str,
        plugin: str = checks.KUBEVIRT_PLUGIN,
        source: str | None = None,
    ) -> None:
        self._init(locals())

    def to_dict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self._values()), aliases=list(self.aliases))
