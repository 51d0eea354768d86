from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Warning(_message.Message):
    __slots__ = ("code", "message")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: str
    message: str
    def __init__(self, code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Resolution(_message.Message):
    __slots__ = ("device", "profile", "resource_name", "name", "device_name", "pci_ids_version", "env_var", "socket_path", "warnings", "advertised", "vendor_name", "algorithm", "plugin_release", "pci_ids_sha256")
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DEVICE_NAME_FIELD_NUMBER: _ClassVar[int]
    PCI_IDS_VERSION_FIELD_NUMBER: _ClassVar[int]
    ENV_VAR_FIELD_NUMBER: _ClassVar[int]
    SOCKET_PATH_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    ADVERTISED_FIELD_NUMBER: _ClassVar[int]
    VENDOR_NAME_FIELD_NUMBER: _ClassVar[int]
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    PLUGIN_RELEASE_FIELD_NUMBER: _ClassVar[int]
    PCI_IDS_SHA256_FIELD_NUMBER: _ClassVar[int]
    device: str
    profile: str
    resource_name: str
    name: str
    device_name: str
    pci_ids_version: str
    env_var: str
    socket_path: str
    warnings: _containers.RepeatedCompositeFieldContainer[Warning]
    advertised: bool
    vendor_name: str
    algorithm: str
    plugin_release: str
    pci_ids_sha256: str
    def __init__(self, device: _Optional[str] = ..., profile: _Optional[str] = ..., resource_name: _Optional[str] = ..., name: _Optional[str] = ..., device_name: _Optional[str] = ..., pci_ids_version: _Optional[str] = ..., env_var: _Optional[str] = ..., socket_path: _Optional[str] = ..., warnings: _Optional[_Iterable[_Union[Warning, _Mapping]]] = ..., advertised: _Optional[bool] = ..., vendor_name: _Optional[str] = ..., algorithm: _Optional[str] = ..., plugin_release: _Optional[str] = ..., pci_ids_sha256: _Optional[str] = ...) -> None: ...

class ResolveRequest(_message.Message):
    __slots__ = ("device", "profile")
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    device: str
    profile: str
    def __init__(self, device: _Optional[str] = ..., profile: _Optional[str] = ...) -> None: ...

class ResolveBatchRequest(_message.Message):
    __slots__ = ("devices", "profile")
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    devices: _containers.RepeatedScalarFieldContainer[str]
    profile: str
    def __init__(self, devices: _Optional[_Iterable[str]] = ..., profile: _Optional[str] = ...) -> None: ...

class ResolveBatchResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[Resolution]
    def __init__(self, results: _Optional[_Iterable[_Union[Resolution, _Mapping]]] = ...) -> None: ...

class ReverseRequest(_message.Message):
    __slots__ = ("resource_name", "profile")
    RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    resource_name: str
    profile: str
    def __init__(self, resource_name: _Optional[str] = ..., profile: _Optional[str] = ...) -> None: ...

class ReverseResponse(_message.Message):
    __slots__ = ("resource_name", "profile", "devices")
    RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    resource_name: str
    profile: str
    devices: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, resource_name: _Optional[str] = ..., profile: _Optional[str] = ..., devices: _Optional[_Iterable[str]] = ...) -> None: ...

class DiffRequest(_message.Message):
    __slots__ = ("from_profile", "to_profile")
    FROM_PROFILE_FIELD_NUMBER: _ClassVar[int]
    TO_PROFILE_FIELD_NUMBER: _ClassVar[int]
    from_profile: str
    to_profile: str
    def __init__(self, from_profile: _Optional[str] = ..., to_profile: _Optional[str] = ...) -> None: ...

class DiffEntry(_message.Message):
    __slots__ = ("device", "change", "old_resource_name", "new_resource_name")
    class Change(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        CHANGE_UNSPECIFIED: _ClassVar[DiffEntry.Change]
        RENAMED: _ClassVar[DiffEntry.Change]
        APPEARS: _ClassVar[DiffEntry.Change]
        VANISHES: _ClassVar[DiffEntry.Change]
    CHANGE_UNSPECIFIED: DiffEntry.Change
    RENAMED: DiffEntry.Change
    APPEARS: DiffEntry.Change
    VANISHES: DiffEntry.Change
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    CHANGE_FIELD_NUMBER: _ClassVar[int]
    OLD_RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    NEW_RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    device: str
    change: DiffEntry.Change
    old_resource_name: str
    new_resource_name: str
    def __init__(self, device: _Optional[str] = ..., change: _Optional[_Union[DiffEntry.Change, str]] = ..., old_resource_name: _Optional[str] = ..., new_resource_name: _Optional[str] = ...) -> None: ...

class DiffResponse(_message.Message):
    __slots__ = ("from_profile", "to_profile", "changes")
    FROM_PROFILE_FIELD_NUMBER: _ClassVar[int]
    TO_PROFILE_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    from_profile: str
    to_profile: str
    changes: _containers.RepeatedCompositeFieldContainer[DiffEntry]
    def __init__(self, from_profile: _Optional[str] = ..., to_profile: _Optional[str] = ..., changes: _Optional[_Iterable[_Union[DiffEntry, _Mapping]]] = ...) -> None: ...

class ListProfilesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ProfileInfo(_message.Message):
    __slots__ = ("name", "kind", "released", "algorithm", "plugin_release", "pci_ids_version", "pci_ids_sha256", "installed", "aliases", "note", "is_default")
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    PLUGIN_RELEASE_FIELD_NUMBER: _ClassVar[int]
    PCI_IDS_VERSION_FIELD_NUMBER: _ClassVar[int]
    PCI_IDS_SHA256_FIELD_NUMBER: _ClassVar[int]
    INSTALLED_FIELD_NUMBER: _ClassVar[int]
    ALIASES_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    IS_DEFAULT_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: str
    released: str
    algorithm: str
    plugin_release: str
    pci_ids_version: str
    pci_ids_sha256: str
    installed: bool
    aliases: _containers.RepeatedScalarFieldContainer[str]
    note: str
    is_default: bool
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., released: _Optional[str] = ..., algorithm: _Optional[str] = ..., plugin_release: _Optional[str] = ..., pci_ids_version: _Optional[str] = ..., pci_ids_sha256: _Optional[str] = ..., installed: _Optional[bool] = ..., aliases: _Optional[_Iterable[str]] = ..., note: _Optional[str] = ..., is_default: _Optional[bool] = ...) -> None: ...

class ListProfilesResponse(_message.Message):
    __slots__ = ("profiles", "data_generation")
    PROFILES_FIELD_NUMBER: _ClassVar[int]
    DATA_GENERATION_FIELD_NUMBER: _ClassVar[int]
    profiles: _containers.RepeatedCompositeFieldContainer[ProfileInfo]
    data_generation: int
    def __init__(self, profiles: _Optional[_Iterable[_Union[ProfileInfo, _Mapping]]] = ..., data_generation: _Optional[int] = ...) -> None: ...

class ListDevicesRequest(_message.Message):
    __slots__ = ("profile", "vendor")
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    VENDOR_FIELD_NUMBER: _ClassVar[int]
    profile: str
    vendor: str
    def __init__(self, profile: _Optional[str] = ..., vendor: _Optional[str] = ...) -> None: ...

class PermittedHostDevicesRequest(_message.Message):
    __slots__ = ("devices", "mdev_types", "profile", "include_broken")
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    MDEV_TYPES_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_BROKEN_FIELD_NUMBER: _ClassVar[int]
    devices: _containers.RepeatedScalarFieldContainer[str]
    mdev_types: _containers.RepeatedScalarFieldContainer[str]
    profile: str
    include_broken: bool
    def __init__(self, devices: _Optional[_Iterable[str]] = ..., mdev_types: _Optional[_Iterable[str]] = ..., profile: _Optional[str] = ..., include_broken: _Optional[bool] = ...) -> None: ...

class PciHostDevice(_message.Message):
    __slots__ = ("pci_vendor_selector", "resource_name", "external_resource_provider")
    PCI_VENDOR_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_RESOURCE_PROVIDER_FIELD_NUMBER: _ClassVar[int]
    pci_vendor_selector: str
    resource_name: str
    external_resource_provider: bool
    def __init__(self, pci_vendor_selector: _Optional[str] = ..., resource_name: _Optional[str] = ..., external_resource_provider: _Optional[bool] = ...) -> None: ...

class MediatedDevice(_message.Message):
    __slots__ = ("mdev_name_selector", "resource_name", "external_resource_provider")
    MDEV_NAME_SELECTOR_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_RESOURCE_PROVIDER_FIELD_NUMBER: _ClassVar[int]
    mdev_name_selector: str
    resource_name: str
    external_resource_provider: bool
    def __init__(self, mdev_name_selector: _Optional[str] = ..., resource_name: _Optional[str] = ..., external_resource_provider: _Optional[bool] = ...) -> None: ...

class SkippedEntry(_message.Message):
    __slots__ = ("item", "kind", "resource_name", "reasons")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    item: str
    kind: str
    resource_name: str
    reasons: _containers.RepeatedCompositeFieldContainer[Warning]
    def __init__(self, item: _Optional[str] = ..., kind: _Optional[str] = ..., resource_name: _Optional[str] = ..., reasons: _Optional[_Iterable[_Union[Warning, _Mapping]]] = ...) -> None: ...

class PermittedHostDevicesResponse(_message.Message):
    __slots__ = ("pci_host_devices", "mediated_devices", "yaml", "left_out", "notes", "profile")
    PCI_HOST_DEVICES_FIELD_NUMBER: _ClassVar[int]
    MEDIATED_DEVICES_FIELD_NUMBER: _ClassVar[int]
    YAML_FIELD_NUMBER: _ClassVar[int]
    LEFT_OUT_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    pci_host_devices: _containers.RepeatedCompositeFieldContainer[PciHostDevice]
    mediated_devices: _containers.RepeatedCompositeFieldContainer[MediatedDevice]
    yaml: str
    left_out: _containers.RepeatedCompositeFieldContainer[SkippedEntry]
    notes: _containers.RepeatedCompositeFieldContainer[SkippedEntry]
    profile: str
    def __init__(self, pci_host_devices: _Optional[_Iterable[_Union[PciHostDevice, _Mapping]]] = ..., mediated_devices: _Optional[_Iterable[_Union[MediatedDevice, _Mapping]]] = ..., yaml: _Optional[str] = ..., left_out: _Optional[_Iterable[_Union[SkippedEntry, _Mapping]]] = ..., notes: _Optional[_Iterable[_Union[SkippedEntry, _Mapping]]] = ..., profile: _Optional[str] = ...) -> None: ...
