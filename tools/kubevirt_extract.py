"""Maintainer script: extract how KubeVirt's own device plugin (virt-handler)
matches ``permittedHostDevices`` selectors, per release
(``data/kubevirt/releases.json``), from the git history of
``kubevirt/kubevirt`` (every final tag ``vX.Y.Z`` from the first with
``permittedHostDevices``, v0.36.0).

    python -m tools.kubevirt_extract --git DIR [--inputs tests/data/kubevirt-inputs]
    python -m tools.kubevirt_extract --from-inputs tests/data/kubevirt-inputs [--check]

``--inputs``/``--from-inputs``/``--check`` as in :mod:`tools.kata_extract`:
the files read are vendored (each blob once) so a test re-runs the script
and compares with the shipped facts.

Per release, from ``pkg/virt-handler/device-manager/``:

* ``pci``: the key of ``supportedPCIDeviceMap`` (``device_controller.go``:
  the selector as written, or ``strings.ToLower`` of it) and what
  ``getDevicePCIID`` / ``GetDevicePCIID`` (``common.go``) returns of the
  device's ``uevent`` ``PCI_ID`` (as written, or lowered); the two are
  compared with Go's ``==`` (a map lookup). The kernel writes ``PCI_ID``
  upper-case (``PCI_ID=%04X:%04X``, :data:`KERNEL_PCI_ID`), so the match is
  case-insensitive exactly when both sides are lowered, and otherwise only
  an upper-case selector matches;
* ``mdev``: the key of ``supportedMdevsMap`` (``removeSelectorSpaces`` of
  ``mdevNameSelector``): compared with the type's name exactly, case included.

and, per release, the ``gates`` a VM's GPUs need (``GPU`` for ``gpus[]``,
``HostDevices`` for ``hostDevices[]``), from ``pkg/virt-config/`` and the VMI
admitter (``vmi-create-admitter.go``):

* ``constant``: where the gate's name is declared;
* ``state``: the ``RegisterFeatureGate`` state it is registered with
  (``GA``, ``Alpha``; ``null`` when it is not registered: then
  ``isFeatureGateEnabled`` looks for it in the CR's list);
* ``admitter``: the message the VMI admitter rejects a VM with when the gate
  is off (``null`` when the admitter no longer checks it); ``required`` is
  whether it does. A gate the admitter checks that is GA, or a GA gate it does
  not check, is an error (the two facts must agree);
* ``warning``: for a GA gate, what listing it warns (``WarningPattern``
  formatted as ``RegisterFeatureGate`` does).

and, per release, what becomes of a VM's GPU later on (``null`` where the
release has no such code):

* ``not_permitted``: the message a ``gpus[]`` (``GPU``) or ``hostDevices[]``
  (``HostDevice``) name no ``permittedHostDevices`` entry permits fails with:
  the VMI admitter's (v0.40 to v0.44) or virt-controller's pod rendering
  (``template.go``, ``renderresources.go``), with its file;
* ``gpu_mismatch``: the error virt-launcher (``gpu/hostdev.go``) fails a VMI
  with when a GPU's resource left no ``PCI_RESOURCE_``/``MDEV_PCI_RESOURCE_``
  variable (a name of NVIDIA's container plugin, which hands out
  ``/dev/nvidia*`` character devices: a MIG name, ``nvidia.com/gpu``), with
  the ``failed to create GPU host-devices:`` prefix where the file declares it.

Each fact names its file and line. A shape the script does not know is an
error naming the release and file: nothing is guessed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from tools import upstream
from tools.upstream import (
    TAG,
    At,
    ExtractError,
    GitSource,
    Recording,
    Source,
    VendoredSource,
    add_extractor_options,
    line_of,
    publish,
    version_key,
)

REPOSITORY = "kubevirt/kubevirt"
LICENSE = "Apache-2.0"
FIRST = "v0.36.0"  # the first release with permittedHostDevices
DIR = "pkg/virt-handler/device-manager/"
CONTROLLER = DIR + "device_controller.go"
COMMON = DIR + "common.go"
#: How Linux writes a PCI device's uevent PCI_ID (drivers/pci/pci-driver.c, pci_uevent).
KERNEL_PCI_ID = {
    "repository": "torvalds/linux",
    "path": "drivers/pci/pci-driver.c",
    "function": "pci_uevent",
    "code": 'add_uevent_var(env, "PCI_ID=%04X:%04X", pdev->vendor, pdev->device)',
    "case": "upper",
    "commit": None,  # not read from a mirror: the format has been %04X since the PCI uevent was written
}

_PCI_KEY = re.compile(r"^\s*supportedPCIDeviceMap\[(.+?)\] = pciDev\.ResourceName\s*$", re.M)
_MDEV_KEY = re.compile(r"^\s*selector := (removeSelectorSpaces\(supportedMdev\.MDEVNameSelector\))\s*$", re.M)
_PCI_ID = re.compile(r'HasPrefix\(line, "PCI_ID"\)(?:.*\n){1,4}?\s*return (value|strings\.ToLower\(value\)), nil')
CONFIG_FILES = (
    "pkg/virt-config/feature-gates.go",
    "pkg/virt-config/deprecation/feature-gates.go",
    "pkg/virt-config/featuregate/feature-gates.go",
    "pkg/virt-config/featuregate/active.go",
    "pkg/virt-config/featuregate/inactive.go",
)
ADMITTER = "pkg/virt-api/webhooks/validating-webhook/admitters/vmi-create-admitter.go"
#: The gates a VM's GPUs need, each with the admitter's message when it is off
#: (the message's text is what is searched for; its line is read from the file).
GATES = {
    "GPU": "GPU feature gate is not enabled in kubevirt-config",
    "HostDevices": "Host Devices feature gate is not enabled in kubevirt-config",
}
_WARNING = re.compile(r'^\s*WarningPattern\s*=\s*"([^"]*)"\s*\+\s*\n\s*"([^"]*)"', re.M)
#: Where a release may check a VM's names against permittedHostDevices.
PERMITTED_FILES = (
    ADMITTER,
    "pkg/virt-controller/services/template.go",
    "pkg/virt-controller/services/renderresources.go",
)
_NOT_PERMITTED = re.compile(r'"((GPU|HostDevice) %s is not permitted in permittedHostDevices configuration)"')
LAUNCHER_GPU = "pkg/virt-launcher/virtwrap/device/hostdevice/gpu/hostdev.go"
_MISMATCH = re.compile(r'"(the number of (?:device plugin )?GPU/s do not match the number of devices):')
_CREATE = re.compile(r'= "(failed to create GPU host-devices: )%v"')
_SELECTOR_AS_WRITTEN = "pciDev.PCIVendorSelector"
_SELECTOR_LOWERED = "strings.ToLower(pciDev.PCIVendorSelector)"


#: (selector lowered, device id lowered) -> which selectors match a device
#: whose uevent PCI_ID the kernel writes upper-case.
_MATCHES = {
    (True, True): "any case",
    (False, False): "upper-case only",
    (False, True): "lower-case only",
    (True, False): "none",
}


def _first(files: dict[str, str], pattern: str) -> tuple[str, str, re.Match[str]] | None:
    """The first match of ``pattern`` in ``files`` (in CONFIG_FILES' order): path, text, match."""
    for path, text in files.items():
        m = re.search(pattern, text, re.M)
        if m is not None:
            return path, text, m
    return None


def _warning(at: At, files: dict[str, str], name: str, state: str) -> str:
    """WarningPattern formatted for a gate (%s its name, %q the state's value), as RegisterFeatureGate does."""
    pattern = _first(files, _WARNING.pattern)
    value = _first(files, rf'^\s*{state}\s+(?:State\s+)?=\s*"([^"]+)"')
    if pattern is None or value is None:
        raise at.fail(
            "pkg/virt-config/", f"WarningPattern or the {state} state's value is not in a shape this script knows"
        )
    text = pattern[2].group(1) + pattern[2].group(2)
    return text.replace("%s", name, 1).replace("%q", f'"{value[2].group(1)}"', 1)


def gate_facts(at: At, name: str, files: dict[str, str], admitter: str) -> dict[str, Any]:
    """One gate's facts in one release."""
    declared = _first(files, rf'^\s*(\w+)\s*=\s*"{name}"')
    if declared is None:
        raise at.fail("pkg/virt-config/", f"no constant declares the {name} gate")
    path, text, m = declared
    constant = {"path": path, "line": line_of(text, m.start(1)), "identifier": m.group(1)}
    registered = _first(files, rf"RegisterFeatureGate\(FeatureGate\{{Name: {m.group(1)}, State: (\w+)")
    state = None if registered is None else registered[2].group(1)
    if state not in (None, "GA", "Alpha"):
        raise at.fail(
            registered[0] if registered else path, f"the {name} gate's state {state!r} is not one this script knows"
        )
    offset = admitter.find(f'"{GATES[name]}"')
    if (offset >= 0) == (state == "GA"):
        raise at.fail(
            ADMITTER, f"the {name} gate is {state} and the admitter {'checks' if offset >= 0 else 'does not check'} it"
        )
    facts: dict[str, Any] = {
        "constant": constant,
        "state": None
        if registered is None
        else {"path": registered[0], "line": line_of(registered[1], registered[2].start(1)), "state": state},
        "required": offset >= 0,
        "admitter": None
        if offset < 0
        else {"path": ADMITTER, "line": line_of(admitter, offset), "message": GATES[name]},
        "warning": None,
    }
    if registered is not None and state == "GA":
        facts["warning"] = _warning(at, files, name, state)
    return facts


def gates(at: At) -> dict[str, Any]:
    """The GPU and HostDevices gates' facts in one release."""
    files = {path: text for path in CONFIG_FILES if (text := at.maybe(path)) is not None}
    admitter = at.text(ADMITTER)
    return {name: gate_facts(at, name, files, admitter) for name in GATES}


def not_permitted(at: At) -> dict[str, Any]:
    """Per list kind (``GPU``, ``HostDevice``), the message and place of the
    permittedHostDevices check in one release (None: it has none); a kind
    checked in two files is an error."""
    found: dict[str, Any] = {"GPU": None, "HostDevice": None}
    for path in PERMITTED_FILES:
        text = at.maybe(path)
        for m in _NOT_PERMITTED.finditer(text or ""):
            if found[m.group(2)] is not None:
                raise at.fail(path, f"a second {m.group(2)} permittedHostDevices check")
            found[m.group(2)] = {"path": path, "line": line_of(text or "", m.start(1)), "message": m.group(1)}
    return found


def gpu_mismatch(at: At) -> dict[str, Any] | None:
    """virt-launcher's error for a GPU without a device plugin's PCI or
    mdev variable (None: the release has no gpu/hostdev.go)."""
    text = at.maybe(LAUNCHER_GPU)
    if text is None:
        return None
    m = at.find(LAUNCHER_GPU, text, _MISMATCH.pattern, "the GPU count check")
    prefix = _CREATE.search(text)
    return {
        "path": LAUNCHER_GPU,
        "line": line_of(text, m.start(1)),
        "message": (prefix.group(1) if prefix else "") + m.group(1),
        "prefix_line": line_of(text, prefix.start(1)) if prefix else None,
    }


def release_facts(at: At) -> dict[str, Any]:
    """One release's selector and feature-gate facts."""
    controller, common = at.text(CONTROLLER), at.text(COMMON)
    key = at.find(CONTROLLER, controller, _PCI_KEY.pattern, "supportedPCIDeviceMap's key")
    if key.group(1) not in (_SELECTOR_AS_WRITTEN, _SELECTOR_LOWERED):
        raise at.fail(CONTROLLER, f"supportedPCIDeviceMap's key {key.group(1)!r} is not a shape this script knows")
    device = _PCI_ID.search(common)
    if device is None:
        raise at.fail(COMMON, "the PCI_ID reader is not in a shape this script knows")
    mdev = at.find(CONTROLLER, controller, _MDEV_KEY.pattern, "supportedMdevsMap's key")
    selector_lowered = key.group(1) == _SELECTOR_LOWERED
    device_lowered = device.group(1) != "value"
    return {
        "release": at.tag,
        "commit": at.commit,
        "pci": {
            "selector": {"path": CONTROLLER, "line": line_of(controller, key.start(1)), "key": key.group(1)},
            "device": {
                "path": COMMON,
                "line": line_of(common, device.start(1)),
                "returns": device.group(1),
            },
            "case_insensitive": selector_lowered and device_lowered,
            "matches": _MATCHES[selector_lowered, device_lowered],
        },
        "mdev": {
            "path": CONTROLLER,
            "line": line_of(controller, mdev.start(1)),
            "key": mdev.group(1),
            "case_insensitive": False,
        },
        "gates": gates(at),
        "not_permitted": not_permitted(at),
        "gpu_mismatch": gpu_mismatch(at),
    }


def extract(source: Source) -> dict[str, Any]:
    releases = []
    for tag, commit, _ in source.tags():
        if version_key(tag) < version_key(FIRST):
            continue
        releases.append(release_facts(At(REPOSITORY, tag, commit, source)))
    if not releases:
        raise ExtractError(f"{REPOSITORY}: no final release tag from {FIRST}")
    return {
        "about": (
            "How KubeVirt's own device plugin (virt-handler) compares permittedHostDevices selectors with the "
            "node's devices, per release (tools/kubevirt_extract.py writes this file)"
        ),
        "repository": REPOSITORY,
        "license": LICENSE,
        "kernel_pci_id": KERNEL_PCI_ID,
        "releases": releases,
    }


def load_inputs(prefix: str | Path) -> VendoredSource:
    return upstream.load_inputs(
        prefix, lambda sidecar, blobs: VendoredSource(sidecar["repositories"][REPOSITORY]["tags"], blobs, {})
    )


def write_inputs(prefix: Path, recording: Recording) -> None:
    sidecar = recording.sidecar(REPOSITORY, LICENSE)
    sidecar["tags"] = {t: row for t, row in sidecar["tags"].items() if TAG.match(t) and row["files"]}
    document = {
        "about": (
            "Upstream files the KubeVirt selector facts (data/kubevirt/releases.json) are extracted from, each "
            "blob once in the .tar.xz beside this file, named by its git blob id; per release tag its commit, "
            "date and the blob of each path read."
        ),
        "repositories": {REPOSITORY: sidecar},
    }
    upstream.write_inputs(prefix, document, recording.blobs)


def shipped_dir() -> Path:
    return upstream.shipped_dir("kubevirt")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.kubevirt_extract", description=__doc__.split("\n\n")[0])
    parser.add_argument("--git", help=f"a {REPOSITORY} git repository (bare is fine)")
    add_extractor_options(parser, "kubevirt")
    args = parser.parse_args(argv)
    if (args.git is None) == (args.from_inputs is None):
        parser.error("give --git DIR or --from-inputs PREFIX")
    try:
        recording = Recording(GitSource(args.git)) if args.git is not None else None
        document = extract(recording if recording is not None else load_inputs(args.from_inputs))
    except ExtractError as error:
        print(f"kubevirt_extract: error: {error}", file=sys.stderr)
        return 2
    out = args.out or shipped_dir()
    checked = publish(out, document, check=args.check)
    if checked is not None:
        return checked
    if recording is not None and args.inputs is not None:
        write_inputs(args.inputs, recording)
    print(f"{out / 'releases.json'}: {len(document['releases'])} KubeVirt releases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
