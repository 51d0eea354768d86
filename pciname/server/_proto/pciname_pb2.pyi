from google.protobuf import struct_pb2 as _struct_pb2
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
    __slots__ = ("device", "profile", "resource_name", "name", "device_name", "pci_ids_version", "env_var", "socket_path", "warnings", "advertised", "vendor_name", "algorithm", "plugin_release", "pci_ids_sha256", "plugin", "alias")
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
    PLUGIN_FIELD_NUMBER: _ClassVar[int]
    ALIAS_FIELD_NUMBER: _ClassVar[int]
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
    plugin: str
    alias: str
    def __init__(self, device: _Optional[str] = ..., profile: _Optional[str] = ..., resource_name: _Optional[str] = ..., name: _Optional[str] = ..., device_name: _Optional[str] = ..., pci_ids_version: _Optional[str] = ..., env_var: _Optional[str] = ..., socket_path: _Optional[str] = ..., warnings: _Optional[_Iterable[_Union[Warning, _Mapping]]] = ..., advertised: _Optional[bool] = ..., vendor_name: _Optional[str] = ..., algorithm: _Optional[str] = ..., plugin_release: _Optional[str] = ..., pci_ids_sha256: _Optional[str] = ..., plugin: _Optional[str] = ..., alias: _Optional[str] = ...) -> None: ...

class ResolveRequest(_message.Message):
    __slots__ = ("device", "profile", "alias", "nvswitch_alias")
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    ALIAS_FIELD_NUMBER: _ClassVar[int]
    NVSWITCH_ALIAS_FIELD_NUMBER: _ClassVar[int]
    device: str
    profile: str
    alias: str
    nvswitch_alias: str
    def __init__(self, device: _Optional[str] = ..., profile: _Optional[str] = ..., alias: _Optional[str] = ..., nvswitch_alias: _Optional[str] = ...) -> None: ...

class ResolveBatchRequest(_message.Message):
    __slots__ = ("devices", "profile", "alias", "nvswitch_alias")
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    ALIAS_FIELD_NUMBER: _ClassVar[int]
    NVSWITCH_ALIAS_FIELD_NUMBER: _ClassVar[int]
    devices: _containers.RepeatedScalarFieldContainer[str]
    profile: str
    alias: str
    nvswitch_alias: str
    def __init__(self, devices: _Optional[_Iterable[str]] = ..., profile: _Optional[str] = ..., alias: _Optional[str] = ..., nvswitch_alias: _Optional[str] = ...) -> None: ...

class ResolveBatchResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[Resolution]
    def __init__(self, results: _Optional[_Iterable[_Union[Resolution, _Mapping]]] = ...) -> None: ...

class ReverseRequest(_message.Message):
    __slots__ = ("resource_name", "profile", "alias", "nvswitch_alias")
    RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    ALIAS_FIELD_NUMBER: _ClassVar[int]
    NVSWITCH_ALIAS_FIELD_NUMBER: _ClassVar[int]
    resource_name: str
    profile: str
    alias: str
    nvswitch_alias: str
    def __init__(self, resource_name: _Optional[str] = ..., profile: _Optional[str] = ..., alias: _Optional[str] = ..., nvswitch_alias: _Optional[str] = ...) -> None: ...

class ReverseResponse(_message.Message):
    __slots__ = ("resource_name", "profile", "devices", "miss")
    RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    MISS_FIELD_NUMBER: _ClassVar[int]
    resource_name: str
    profile: str
    devices: _containers.RepeatedScalarFieldContainer[str]
    miss: str
    def __init__(self, resource_name: _Optional[str] = ..., profile: _Optional[str] = ..., devices: _Optional[_Iterable[str]] = ..., miss: _Optional[str] = ...) -> None: ...

class DiffRequest(_message.Message):
    __slots__ = ("from_profile", "to_profile", "alias", "nvswitch_alias")
    FROM_PROFILE_FIELD_NUMBER: _ClassVar[int]
    TO_PROFILE_FIELD_NUMBER: _ClassVar[int]
    ALIAS_FIELD_NUMBER: _ClassVar[int]
    NVSWITCH_ALIAS_FIELD_NUMBER: _ClassVar[int]
    from_profile: str
    to_profile: str
    alias: str
    nvswitch_alias: str
    def __init__(self, from_profile: _Optional[str] = ..., to_profile: _Optional[str] = ..., alias: _Optional[str] = ..., nvswitch_alias: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("name", "kind", "released", "algorithm", "plugin_release", "pci_ids_version", "pci_ids_sha256", "installed", "aliases", "note", "is_default", "plugin", "source")
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
    PLUGIN_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
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
    plugin: str
    source: str
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., released: _Optional[str] = ..., algorithm: _Optional[str] = ..., plugin_release: _Optional[str] = ..., pci_ids_version: _Optional[str] = ..., pci_ids_sha256: _Optional[str] = ..., installed: _Optional[bool] = ..., aliases: _Optional[_Iterable[str]] = ..., note: _Optional[str] = ..., is_default: _Optional[bool] = ..., plugin: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class ListProfilesResponse(_message.Message):
    __slots__ = ("profiles", "data_generation")
    PROFILES_FIELD_NUMBER: _ClassVar[int]
    DATA_GENERATION_FIELD_NUMBER: _ClassVar[int]
    profiles: _containers.RepeatedCompositeFieldContainer[ProfileInfo]
    data_generation: int
    def __init__(self, profiles: _Optional[_Iterable[_Union[ProfileInfo, _Mapping]]] = ..., data_generation: _Optional[int] = ...) -> None: ...

class ListDevicesRequest(_message.Message):
    __slots__ = ("profile", "vendor", "alias", "nvswitch_alias")
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    VENDOR_FIELD_NUMBER: _ClassVar[int]
    ALIAS_FIELD_NUMBER: _ClassVar[int]
    NVSWITCH_ALIAS_FIELD_NUMBER: _ClassVar[int]
    profile: str
    vendor: str
    alias: str
    nvswitch_alias: str
    def __init__(self, profile: _Optional[str] = ..., vendor: _Optional[str] = ..., alias: _Optional[str] = ..., nvswitch_alias: _Optional[str] = ...) -> None: ...

class PermittedHostDevicesRequest(_message.Message):
    __slots__ = ("devices", "mdev_types", "profile", "include_broken", "format", "replace_defaults", "variant", "vgpu_device_manager", "cozystack_defaults", "cozystack")
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    MDEV_TYPES_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_BROKEN_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    REPLACE_DEFAULTS_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    VGPU_DEVICE_MANAGER_FIELD_NUMBER: _ClassVar[int]
    COZYSTACK_DEFAULTS_FIELD_NUMBER: _ClassVar[int]
    COZYSTACK_FIELD_NUMBER: _ClassVar[int]
    devices: _containers.RepeatedScalarFieldContainer[str]
    mdev_types: _containers.RepeatedScalarFieldContainer[str]
    profile: str
    include_broken: bool
    format: str
    replace_defaults: bool
    variant: str
    vgpu_device_manager: bool
    cozystack_defaults: str
    cozystack: str
    def __init__(self, devices: _Optional[_Iterable[str]] = ..., mdev_types: _Optional[_Iterable[str]] = ..., profile: _Optional[str] = ..., include_broken: _Optional[bool] = ..., format: _Optional[str] = ..., replace_defaults: _Optional[bool] = ..., variant: _Optional[str] = ..., vgpu_device_manager: _Optional[bool] = ..., cozystack_defaults: _Optional[str] = ..., cozystack: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("pci_host_devices", "mediated_devices", "yaml", "left_out", "notes", "profile", "json", "format", "clashes", "variant")
    PCI_HOST_DEVICES_FIELD_NUMBER: _ClassVar[int]
    MEDIATED_DEVICES_FIELD_NUMBER: _ClassVar[int]
    YAML_FIELD_NUMBER: _ClassVar[int]
    LEFT_OUT_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    CLASHES_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    pci_host_devices: _containers.RepeatedCompositeFieldContainer[PciHostDevice]
    mediated_devices: _containers.RepeatedCompositeFieldContainer[MediatedDevice]
    yaml: str
    left_out: _containers.RepeatedCompositeFieldContainer[SkippedEntry]
    notes: _containers.RepeatedCompositeFieldContainer[SkippedEntry]
    profile: str
    json: str
    format: str
    clashes: _containers.RepeatedCompositeFieldContainer[SkippedEntry]
    variant: str
    def __init__(self, pci_host_devices: _Optional[_Iterable[_Union[PciHostDevice, _Mapping]]] = ..., mediated_devices: _Optional[_Iterable[_Union[MediatedDevice, _Mapping]]] = ..., yaml: _Optional[str] = ..., left_out: _Optional[_Iterable[_Union[SkippedEntry, _Mapping]]] = ..., notes: _Optional[_Iterable[_Union[SkippedEntry, _Mapping]]] = ..., profile: _Optional[str] = ..., json: _Optional[str] = ..., format: _Optional[str] = ..., clashes: _Optional[_Iterable[_Union[SkippedEntry, _Mapping]]] = ..., variant: _Optional[str] = ...) -> None: ...

class LintFile(_message.Message):
    __slots__ = ("name", "text", "data")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    name: str
    text: str
    data: bytes
    def __init__(self, name: _Optional[str] = ..., text: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class LintRequest(_message.Message):
    __slots__ = ("files", "profile", "upgrade_to", "cozystack", "dra_driver", "kubevirt", "nvidia_plugin", "hami")
    FILES_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    UPGRADE_TO_FIELD_NUMBER: _ClassVar[int]
    COZYSTACK_FIELD_NUMBER: _ClassVar[int]
    DRA_DRIVER_FIELD_NUMBER: _ClassVar[int]
    KUBEVIRT_FIELD_NUMBER: _ClassVar[int]
    NVIDIA_PLUGIN_FIELD_NUMBER: _ClassVar[int]
    HAMI_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[LintFile]
    profile: str
    upgrade_to: str
    cozystack: str
    dra_driver: str
    kubevirt: str
    nvidia_plugin: str
    hami: str
    def __init__(self, files: _Optional[_Iterable[_Union[LintFile, _Mapping]]] = ..., profile: _Optional[str] = ..., upgrade_to: _Optional[str] = ..., cozystack: _Optional[str] = ..., dra_driver: _Optional[str] = ..., kubevirt: _Optional[str] = ..., nvidia_plugin: _Optional[str] = ..., hami: _Optional[str] = ...) -> None: ...

class Finding(_message.Message):
    __slots__ = ("file", "line", "column", "document", "path", "value", "code", "message", "expected")
    FILE_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_FIELD_NUMBER: _ClassVar[int]
    file: str
    line: int
    column: int
    document: int
    path: str
    value: _struct_pb2.Value
    code: str
    message: str
    expected: _struct_pb2.Value
    def __init__(self, file: _Optional[str] = ..., line: _Optional[int] = ..., column: _Optional[int] = ..., document: _Optional[int] = ..., path: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., expected: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class LintResponse(_message.Message):
    __slots__ = ("findings", "profile", "upgrade_to", "documents", "text", "notes")
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    UPGRADE_TO_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    findings: _containers.RepeatedCompositeFieldContainer[Finding]
    profile: str
    upgrade_to: str
    documents: int
    text: str
    notes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, findings: _Optional[_Iterable[_Union[Finding, _Mapping]]] = ..., profile: _Optional[str] = ..., upgrade_to: _Optional[str] = ..., documents: _Optional[int] = ..., text: _Optional[str] = ..., notes: _Optional[_Iterable[str]] = ...) -> None: ...

class GpuOptionsRequest(_message.Message):
    __slots__ = ("profile", "kubevirt", "nodes", "from_cluster", "kubevirt_name", "cozystack")
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    KUBEVIRT_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    FROM_CLUSTER_FIELD_NUMBER: _ClassVar[int]
    KUBEVIRT_NAME_FIELD_NUMBER: _ClassVar[int]
    COZYSTACK_FIELD_NUMBER: _ClassVar[int]
    profile: str
    kubevirt: str
    nodes: str
    from_cluster: bool
    kubevirt_name: str
    cozystack: str
    def __init__(self, profile: _Optional[str] = ..., kubevirt: _Optional[str] = ..., nodes: _Optional[str] = ..., from_cluster: _Optional[bool] = ..., kubevirt_name: _Optional[str] = ..., cozystack: _Optional[str] = ...) -> None: ...

class NodeAllocatable(_message.Message):
    __slots__ = ("name", "allocatable")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ALLOCATABLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    allocatable: int
    def __init__(self, name: _Optional[str] = ..., allocatable: _Optional[int] = ...) -> None: ...

class GpuOption(_message.Message):
    __slots__ = ("resource_name", "kind", "selectors", "devices", "models", "allocatable", "nodes")
    RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SELECTORS_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    MODELS_FIELD_NUMBER: _ClassVar[int]
    ALLOCATABLE_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    resource_name: str
    kind: str
    selectors: _containers.RepeatedScalarFieldContainer[str]
    devices: _containers.RepeatedScalarFieldContainer[str]
    models: _containers.RepeatedScalarFieldContainer[str]
    allocatable: int
    nodes: _containers.RepeatedCompositeFieldContainer[NodeAllocatable]
    def __init__(self, resource_name: _Optional[str] = ..., kind: _Optional[str] = ..., selectors: _Optional[_Iterable[str]] = ..., devices: _Optional[_Iterable[str]] = ..., models: _Optional[_Iterable[str]] = ..., allocatable: _Optional[int] = ..., nodes: _Optional[_Iterable[_Union[NodeAllocatable, _Mapping]]] = ...) -> None: ...

class GpuOptionsResponse(_message.Message):
    __slots__ = ("options", "profile", "profile_source", "kubevirt")
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_SOURCE_FIELD_NUMBER: _ClassVar[int]
    KUBEVIRT_FIELD_NUMBER: _ClassVar[int]
    options: _containers.RepeatedCompositeFieldContainer[GpuOption]
    profile: str
    profile_source: str
    kubevirt: str
    def __init__(self, options: _Optional[_Iterable[_Union[GpuOption, _Mapping]]] = ..., profile: _Optional[str] = ..., profile_source: _Optional[str] = ..., kubevirt: _Optional[str] = ...) -> None: ...

class NodePoolRequest(_message.Message):
    __slots__ = ("group", "devices", "mdev_types", "profile", "include_broken", "fragment", "format", "instance_type", "min_replicas", "max_replicas", "ephemeral_storage", "roles", "cpu", "memory", "cozystack", "cluster")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    MDEV_TYPES_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_BROKEN_FIELD_NUMBER: _ClassVar[int]
    FRAGMENT_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    MIN_REPLICAS_FIELD_NUMBER: _ClassVar[int]
    MAX_REPLICAS_FIELD_NUMBER: _ClassVar[int]
    EPHEMERAL_STORAGE_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    CPU_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    COZYSTACK_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    group: str
    devices: _containers.RepeatedScalarFieldContainer[str]
    mdev_types: _containers.RepeatedScalarFieldContainer[str]
    profile: str
    include_broken: bool
    fragment: bool
    format: str
    instance_type: str
    min_replicas: int
    max_replicas: int
    ephemeral_storage: str
    roles: _containers.RepeatedScalarFieldContainer[str]
    cpu: str
    memory: str
    cozystack: str
    cluster: str
    def __init__(self, group: _Optional[str] = ..., devices: _Optional[_Iterable[str]] = ..., mdev_types: _Optional[_Iterable[str]] = ..., profile: _Optional[str] = ..., include_broken: _Optional[bool] = ..., fragment: _Optional[bool] = ..., format: _Optional[str] = ..., instance_type: _Optional[str] = ..., min_replicas: _Optional[int] = ..., max_replicas: _Optional[int] = ..., ephemeral_storage: _Optional[str] = ..., roles: _Optional[_Iterable[str]] = ..., cpu: _Optional[str] = ..., memory: _Optional[str] = ..., cozystack: _Optional[str] = ..., cluster: _Optional[str] = ...) -> None: ...

class NodePoolResponse(_message.Message):
    __slots__ = ("yaml", "json", "left_out", "notes", "profile", "format", "gpus")
    YAML_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    LEFT_OUT_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    yaml: str
    json: str
    left_out: _containers.RepeatedCompositeFieldContainer[SkippedEntry]
    notes: _containers.RepeatedCompositeFieldContainer[SkippedEntry]
    profile: str
    format: str
    gpus: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, yaml: _Optional[str] = ..., json: _Optional[str] = ..., left_out: _Optional[_Iterable[_Union[SkippedEntry, _Mapping]]] = ..., notes: _Optional[_Iterable[_Union[SkippedEntry, _Mapping]]] = ..., profile: _Optional[str] = ..., format: _Optional[str] = ..., gpus: _Optional[_Iterable[str]] = ...) -> None: ...

class VgpuTypesRequest(_message.Message):
    __slots__ = ("device", "profile")
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    device: str
    profile: str
    def __init__(self, device: _Optional[str] = ..., profile: _Optional[str] = ...) -> None: ...

class VgpuPrefixEvidence(_message.Message):
    __slots__ = ("observed", "kind", "source", "driver", "located")
    OBSERVED_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    LOCATED_FIELD_NUMBER: _ClassVar[int]
    observed: str
    kind: str
    source: str
    driver: str
    located: bool
    def __init__(self, observed: _Optional[str] = ..., kind: _Optional[str] = ..., source: _Optional[str] = ..., driver: _Optional[str] = ..., located: _Optional[bool] = ...) -> None: ...

class VgpuType(_message.Message):
    __slots__ = ("type", "vgpu_config", "max_instances", "family", "mdev_name", "mdev_name_certainty", "evidence", "resource_name", "since", "note", "inferred_max_instances")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VGPU_CONFIG_FIELD_NUMBER: _ClassVar[int]
    MAX_INSTANCES_FIELD_NUMBER: _ClassVar[int]
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    MDEV_NAME_FIELD_NUMBER: _ClassVar[int]
    MDEV_NAME_CERTAINTY_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    INFERRED_MAX_INSTANCES_FIELD_NUMBER: _ClassVar[int]
    type: str
    vgpu_config: str
    max_instances: int
    family: str
    mdev_name: str
    mdev_name_certainty: str
    evidence: VgpuPrefixEvidence
    resource_name: str
    since: str
    note: str
    inferred_max_instances: int
    def __init__(self, type: _Optional[str] = ..., vgpu_config: _Optional[str] = ..., max_instances: _Optional[int] = ..., family: _Optional[str] = ..., mdev_name: _Optional[str] = ..., mdev_name_certainty: _Optional[str] = ..., evidence: _Optional[_Union[VgpuPrefixEvidence, _Mapping]] = ..., resource_name: _Optional[str] = ..., since: _Optional[str] = ..., note: _Optional[str] = ..., inferred_max_instances: _Optional[int] = ...) -> None: ...

class VgpuTypesResponse(_message.Message):
    __slots__ = ("device", "profile", "covered", "message", "families", "catalogue_release", "catalogue_commit", "read_on_host", "types")
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    COVERED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FAMILIES_FIELD_NUMBER: _ClassVar[int]
    CATALOGUE_RELEASE_FIELD_NUMBER: _ClassVar[int]
    CATALOGUE_COMMIT_FIELD_NUMBER: _ClassVar[int]
    READ_ON_HOST_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    device: str
    profile: str
    covered: bool
    message: str
    families: _containers.RepeatedScalarFieldContainer[str]
    catalogue_release: str
    catalogue_commit: str
    read_on_host: str
    types: _containers.RepeatedCompositeFieldContainer[VgpuType]
    def __init__(self, device: _Optional[str] = ..., profile: _Optional[str] = ..., covered: _Optional[bool] = ..., message: _Optional[str] = ..., families: _Optional[_Iterable[str]] = ..., catalogue_release: _Optional[str] = ..., catalogue_commit: _Optional[str] = ..., read_on_host: _Optional[str] = ..., types: _Optional[_Iterable[_Union[VgpuType, _Mapping]]] = ...) -> None: ...

class AdmissionPolicyRequest(_message.Message):
    __slots__ = ("devices", "mdev_types", "profile", "kubevirt_cr", "from_cluster", "kubevirt_name", "actions", "name", "dra", "dra_driver")
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    MDEV_TYPES_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    KUBEVIRT_CR_FIELD_NUMBER: _ClassVar[int]
    FROM_CLUSTER_FIELD_NUMBER: _ClassVar[int]
    KUBEVIRT_NAME_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DRA_FIELD_NUMBER: _ClassVar[int]
    DRA_DRIVER_FIELD_NUMBER: _ClassVar[int]
    devices: _containers.RepeatedScalarFieldContainer[str]
    mdev_types: _containers.RepeatedScalarFieldContainer[str]
    profile: str
    kubevirt_cr: str
    from_cluster: bool
    kubevirt_name: str
    actions: _containers.RepeatedScalarFieldContainer[str]
    name: str
    dra: bool
    dra_driver: str
    def __init__(self, devices: _Optional[_Iterable[str]] = ..., mdev_types: _Optional[_Iterable[str]] = ..., profile: _Optional[str] = ..., kubevirt_cr: _Optional[str] = ..., from_cluster: _Optional[bool] = ..., kubevirt_name: _Optional[str] = ..., actions: _Optional[_Iterable[str]] = ..., name: _Optional[str] = ..., dra: _Optional[bool] = ..., dra_driver: _Optional[str] = ...) -> None: ...

class AdmissionPolicyResponse(_message.Message):
    __slots__ = ("yaml", "json", "allowed", "profile", "left_out", "findings", "actions")
    YAML_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    LEFT_OUT_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    yaml: str
    json: str
    allowed: _containers.RepeatedScalarFieldContainer[str]
    profile: str
    left_out: _containers.RepeatedCompositeFieldContainer[SkippedEntry]
    findings: _containers.RepeatedScalarFieldContainer[str]
    actions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, yaml: _Optional[str] = ..., json: _Optional[str] = ..., allowed: _Optional[_Iterable[str]] = ..., profile: _Optional[str] = ..., left_out: _Optional[_Iterable[_Union[SkippedEntry, _Mapping]]] = ..., findings: _Optional[_Iterable[str]] = ..., actions: _Optional[_Iterable[str]] = ...) -> None: ...

class DraClaimsRequest(_message.Message):
    __slots__ = ("devices", "dra_driver", "kubevirt", "resource_api", "name", "prefix", "product_name")
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    DRA_DRIVER_FIELD_NUMBER: _ClassVar[int]
    KUBEVIRT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_API_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    PRODUCT_NAME_FIELD_NUMBER: _ClassVar[int]
    devices: _containers.RepeatedScalarFieldContainer[str]
    dra_driver: str
    kubevirt: str
    resource_api: str
    name: str
    prefix: str
    product_name: bool
    def __init__(self, devices: _Optional[_Iterable[str]] = ..., dra_driver: _Optional[str] = ..., kubevirt: _Optional[str] = ..., resource_api: _Optional[str] = ..., name: _Optional[str] = ..., prefix: _Optional[str] = ..., product_name: _Optional[bool] = ...) -> None: ...

class DraClaimsResponse(_message.Message):
    __slots__ = ("dra_driver", "kubevirt", "resource_api", "yaml", "json", "notes")
    DRA_DRIVER_FIELD_NUMBER: _ClassVar[int]
    KUBEVIRT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_API_FIELD_NUMBER: _ClassVar[int]
    YAML_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    dra_driver: str
    kubevirt: str
    resource_api: str
    yaml: str
    json: str
    notes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, dra_driver: _Optional[str] = ..., kubevirt: _Optional[str] = ..., resource_api: _Optional[str] = ..., yaml: _Optional[str] = ..., json: _Optional[str] = ..., notes: _Optional[_Iterable[str]] = ...) -> None: ...

class DoctorRequest(_message.Message):
    __slots__ = ("variant",)
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    variant: str
    def __init__(self, variant: _Optional[str] = ...) -> None: ...

class DoctorFinding(_message.Message):
    __slots__ = ("code", "severity", "subject", "message", "way_back", "cozystack")
    class CozystackEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CODE_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    WAY_BACK_FIELD_NUMBER: _ClassVar[int]
    COZYSTACK_FIELD_NUMBER: _ClassVar[int]
    code: str
    severity: str
    subject: str
    message: str
    way_back: _containers.RepeatedScalarFieldContainer[str]
    cozystack: _containers.ScalarMap[str, str]
    def __init__(self, code: _Optional[str] = ..., severity: _Optional[str] = ..., subject: _Optional[str] = ..., message: _Optional[str] = ..., way_back: _Optional[_Iterable[str]] = ..., cozystack: _Optional[_Mapping[str, str]] = ...) -> None: ...

class DoctorResponse(_message.Message):
    __slots__ = ("variant", "workload", "servable", "findings")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    WORKLOAD_FIELD_NUMBER: _ClassVar[int]
    SERVABLE_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    variant: str
    workload: str
    servable: _containers.RepeatedScalarFieldContainer[str]
    findings: _containers.RepeatedCompositeFieldContainer[DoctorFinding]
    def __init__(self, variant: _Optional[str] = ..., workload: _Optional[str] = ..., servable: _Optional[_Iterable[str]] = ..., findings: _Optional[_Iterable[_Union[DoctorFinding, _Mapping]]] = ...) -> None: ...

class ImageCheckRequest(_message.Message):
    __slots__ = ("tarball", "hami")
    TARBALL_FIELD_NUMBER: _ClassVar[int]
    HAMI_FIELD_NUMBER: _ClassVar[int]
    tarball: bytes
    hami: str
    def __init__(self, tarball: _Optional[bytes] = ..., hami: _Optional[str] = ...) -> None: ...

class ImageCheckLibrary(_message.Message):
    __slots__ = ("path", "kind", "version", "machine")
    PATH_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MACHINE_FIELD_NUMBER: _ClassVar[int]
    path: str
    kind: str
    version: str
    machine: str
    def __init__(self, path: _Optional[str] = ..., kind: _Optional[str] = ..., version: _Optional[str] = ..., machine: _Optional[str] = ...) -> None: ...

class ImageCheckResponse(_message.Message):
    __slots__ = ("image", "hami", "libvgpu_commit", "library", "holds", "reasons", "sees")
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    HAMI_FIELD_NUMBER: _ClassVar[int]
    LIBVGPU_COMMIT_FIELD_NUMBER: _ClassVar[int]
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    HOLDS_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    SEES_FIELD_NUMBER: _ClassVar[int]
    image: str
    hami: str
    libvgpu_commit: str
    library: ImageCheckLibrary
    holds: bool
    reasons: _containers.RepeatedScalarFieldContainer[str]
    sees: str
    def __init__(self, image: _Optional[str] = ..., hami: _Optional[str] = ..., libvgpu_commit: _Optional[str] = ..., library: _Optional[_Union[ImageCheckLibrary, _Mapping]] = ..., holds: _Optional[bool] = ..., reasons: _Optional[_Iterable[str]] = ..., sees: _Optional[str] = ...) -> None: ...

class GfdLabelsRequest(_message.Message):
    __slots__ = ("product", "count", "release", "memory_mib", "compute", "replicas", "renamed", "sharing_strategy")
    PRODUCT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    MEMORY_MIB_FIELD_NUMBER: _ClassVar[int]
    COMPUTE_FIELD_NUMBER: _ClassVar[int]
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    RENAMED_FIELD_NUMBER: _ClassVar[int]
    SHARING_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    product: str
    count: int
    release: str
    memory_mib: int
    compute: str
    replicas: int
    renamed: bool
    sharing_strategy: str
    def __init__(self, product: _Optional[str] = ..., count: _Optional[int] = ..., release: _Optional[str] = ..., memory_mib: _Optional[int] = ..., compute: _Optional[str] = ..., replicas: _Optional[int] = ..., renamed: _Optional[bool] = ..., sharing_strategy: _Optional[str] = ...) -> None: ...

class GfdLabelsResponse(_message.Message):
    __slots__ = ("release", "commit", "labels", "product", "sources")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    PRODUCT_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    release: str
    commit: str
    labels: _containers.ScalarMap[str, str]
    product: str
    sources: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, release: _Optional[str] = ..., commit: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., product: _Optional[str] = ..., sources: _Optional[_Iterable[str]] = ...) -> None: ...
