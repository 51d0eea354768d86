"""Lint on public GPU configurations nobody here wrote (tests/data/lint-corpus/,
SOURCES says where each comes from): the findings are exactly the expected
ones, each with its reason beside it, under the default ``--nvidia-plugin
auto`` and under ``yes`` and ``no``, with the newest plugin and v1.0.1. The
mistakes lint is known to miss are KNOWN_MISSED (strict xfails: a rule that
finds one fails the test until it moves to EXPECTED), and all the files
linted in one run find what each finds alone, but for the differences
TOGETHER_DROPPED names."""

from __future__ import annotations

import pytest

from pciname.lint.linter import Linter
from tests.conftest import REPO

CORPUS = REPO / "tests" / "data" / "lint-corpus"
LATEST, V1_0 = "latest", "kubevirt-gpu-device-plugin@v1.0.1"

#: (file, profile, --nvidia-plugin) -> the expected (line, code) findings,
#: each with the reason it is right, and how many notes.
EXPECTED: dict[tuple[str, str, str], tuple[list[tuple[int, str, str]], int]] = {
    # KubeVirt user guide: the T4 entry with externalResourceProvider: true is
    # NVIDIA's plugin's, and every release from v1.1.0 upper-cases the name
    # (TU104GL_TESLA_T4): the guide's TU104GL_Tesla_T4 is v1.0.x's. The GRID
    # T4-1Q entry has no externalResourceProvider: KubeVirt's own plugin
    # serves it as written (a note under auto; a finding only where NVIDIA's
    # plugin also serves vGPU types on those nodes).
    ("kubevirt-user-guide-host-devices.yaml", LATEST, "auto"): (
        [(14, "wrong-resource-name", "v1.1.0+ names 10DE:1EB8 TU104GL_TESLA_T4")],
        1,
    ),
    ("kubevirt-user-guide-host-devices.yaml", LATEST, "yes"): (
        [
            (14, "wrong-resource-name", "as under auto"),
            (19, "missing-external-resource-provider", "NVIDIA's plugin serves GRID T4-1Q too: two plugins"),
        ],
        0,
    ),
    ("kubevirt-user-guide-host-devices.yaml", LATEST, "no"): (
        [(14, "wrong-resource-name", "the entry itself says NVIDIA's plugin serves it")],
        0,
    ),
    ("kubevirt-user-guide-host-devices.yaml", V1_0, "auto"): ([], 1),  # v1.0.1's name, as the guide wrote it
    # KubeVirt's developer docs: both NVIDIA entries without
    # externalResourceProvider, so KubeVirt's own plugins serve them under
    # the names given. Under the newest plugin the T4's name is not NVIDIA's
    # (no clash, nothing to note); under v1.0.1 it is, which is a mistake
    # only where NVIDIA's plugin runs too.
    ("kubevirt-devel-host-devices.yaml", LATEST, "auto"): ([], 1),  # the GRID entry's note
    ("kubevirt-devel-host-devices.yaml", LATEST, "no"): ([], 0),
    ("kubevirt-devel-host-devices.yaml", LATEST, "yes"): (  # KNOWN_MISSED: line 15
        [(20, "missing-external-resource-provider", "NVIDIA's plugin serves GRID T4-1Q too")],
        0,
    ),
    ("kubevirt-devel-host-devices.yaml", V1_0, "auto"): ([], 2),  # both names are v1.0.1's NVIDIA names: notes
    ("kubevirt-devel-host-devices.yaml", V1_0, "yes"): (
        [
            (15, "missing-external-resource-provider", "v1.0.1 names 10DE:1EB8 TU104GL_Tesla_T4 too"),
            (20, "missing-external-resource-provider", "NVIDIA's plugin serves GRID T4-1Q too"),
        ],
        0,
    ),
    # Cozystack's SR-IOV vGPU guide: KubeVirt v1.9 serves the L40S VFs under
    # the name given (externalResourceProvider omitted, as the guide says),
    # a name NVIDIA's plugin gives no device, so nothing clashes even where
    # it runs; the VM asks for that name. Its hostDevices need the
    # HostDevices gate, which no KubeVirt CR of the file shows: a note says
    # so (the guide's KubeVirt configuration is a patch, not a CR).
    ("cozystack-gpu-vgpu-sriov.yaml", LATEST, "auto"): ([], 1),
    ("cozystack-gpu-vgpu-sriov.yaml", LATEST, "yes"): ([], 1),
    ("cozystack-gpu-vgpu-sriov.yaml", V1_0, "auto"): ([], 1),
    # The KubeVirt user guide's VMI (the page whose permittedHostDevices is
    # kubevirt-user-guide-host-devices.yaml): no entry of the input permits
    # its names, so they are checked as NVIDIA's plugin names them. The
    # GRID_T4-1Q vGPU name has no permittedHostDevices to be checked against:
    # a note says so (never silently clean); intel.com/qat is no GPU name.
    # Each run also notes that the HostDevices gate its hostDevices need was
    # not checked (no KubeVirt CR).
    ("kubevirt-user-guide-vmi-gpus.yaml", LATEST, "auto"): (
        [
            (
                11,
                "unknown-resource-name",
                "v1.1.0+ names 10DE:1EB8 TU104GL_TESLA_T4; nothing in the input serves this one",
            )
        ],
        2,
    ),
    ("kubevirt-user-guide-vmi-gpus.yaml", LATEST, "yes"): ([(11, "unknown-resource-name", "as under auto")], 2),
    ("kubevirt-user-guide-vmi-gpus.yaml", LATEST, "no"): (
        [(11, "unknown-resource-name", "as under auto: no entry says KubeVirt's own plugin serves it")],
        2,
    ),
    ("kubevirt-user-guide-vmi-gpus.yaml", V1_0, "auto"): ([], 2),  # v1.0.1's name for the T4
    # OpenShift Virtualization, PCI passthrough: a HyperConverged CR
    # (pciDeviceSelector is its field) whose NVIDIA entries have no
    # externalResourceProvider, so KubeVirt's own plugin serves them under the
    # names given. Under the newest plugin neither is a name NVIDIA's plugin
    # gives a device; under v1.0.1 the T4's is (TU104GL_Tesla_T4), the V100's
    # is not (v1.0.1 says GV100GL_Tesla_V100_PCIe_32GB). Under yes, the two
    # plugins would both serve those GPUs under two names: KNOWN_MISSED.
    ("openshift-docs-pci-host-devices-hco.yaml", LATEST, "auto"): ([], 0),  # no name clash, nothing to note
    ("openshift-docs-pci-host-devices-hco.yaml", LATEST, "yes"): ([], 0),  # KNOWN_MISSED: lines 15 and 17
    ("openshift-docs-pci-host-devices-hco.yaml", LATEST, "no"): ([], 0),  # KubeVirt's own plugin alone: right
    ("openshift-docs-pci-host-devices-hco.yaml", V1_0, "auto"): ([], 1),  # the T4's name is v1.0.1's: a note
    ("openshift-docs-pci-host-devices-hco.yaml", V1_0, "yes"): (
        [(17, "missing-external-resource-provider", "v1.0.1 names 10DE:1EB8 TU104GL_Tesla_T4 too: two plugins")],
        0,
    ),
    ("openshift-docs-pci-host-devices-hco.yaml", V1_0, "no"): ([], 0),
    # OpenShift Virtualization, vGPUs: KubeVirt creates them
    # (mediatedDevicesConfiguration) and, without externalResourceProvider,
    # its own plugin serves them: right where NVIDIA's plugin does not run,
    # a mistake where it does (it serves the same vGPUs, whatever it names
    # them), a note each under auto.
    ("openshift-docs-mediated-devices-hco.yaml", LATEST, "auto"): ([], 2),
    ("openshift-docs-mediated-devices-hco.yaml", LATEST, "yes"): (
        [
            (25, "missing-external-resource-provider", "NVIDIA's plugin serves GRID T4-2Q too: two plugins"),
            (27, "missing-external-resource-provider", "NVIDIA's plugin serves GRID T4-8Q too: two plugins"),
        ],
        0,
    ),
    ("openshift-docs-mediated-devices-hco.yaml", LATEST, "no"): ([], 0),
    ("openshift-docs-mediated-devices-hco.yaml", V1_0, "auto"): ([], 2),
    ("openshift-docs-mediated-devices-hco.yaml", V1_0, "yes"): (
        [
            (25, "missing-external-resource-provider", "v1.0.1 serves GRID T4-2Q too (as T4-2Q): two plugins"),
            (27, "missing-external-resource-provider", "v1.0.1 serves GRID T4-8Q too (as T4-8Q): two plugins"),
        ],
        0,
    ),
    # OpenShift Virtualization's VM asking for the PCI name and the vGPU name
    # of its HyperConverged examples. Alone, nothing permits them: the T4's
    # is checked as NVIDIA's plugin names it (with the PCI example, which has
    # KubeVirt's own plugin serve it, TOGETHER_DROPPED). Its `domain` directly
    # under a VirtualMachine's `spec` (not spec.template.spec) is a schema
    # mistake the API server refuses, no name: outside lint, which finds
    # gpus[] at any depth on purpose (VMs, VMIs, pools, replica sets). The
    # GRID_T4-2Q vGPU name, with no permittedHostDevices, is a note.
    ("openshift-docs-vm-gpus.yaml", LATEST, "auto"): (
        [
            (
                13,
                "unknown-resource-name",
                "v1.1.0+ names 10DE:1EB8 TU104GL_TESLA_T4; nothing in the input serves this one",
            )
        ],
        1,
    ),
    ("openshift-docs-vm-gpus.yaml", LATEST, "no"): (
        [(13, "unknown-resource-name", "as under auto: no entry says KubeVirt's own plugin serves it")],
        1,
    ),
    ("openshift-docs-vm-gpus.yaml", V1_0, "auto"): ([], 1),  # v1.0.1's name for the T4
    # NVIDIA's GPU Operator with KubeVirt page today: both entries with
    # externalResourceProvider: true (NVIDIA's plugin serves them), so
    # --nvidia-plugin changes nothing. The newest plugin's names, as written;
    # v1.0.1's pci.ids (2019-08-14) predates the A10 and its vGPU names keep
    # the type string's second field.
    ("nvidia-gpu-operator-kubevirt.yaml", LATEST, "auto"): ([], 0),
    ("nvidia-gpu-operator-kubevirt.yaml", LATEST, "yes"): ([], 0),
    ("nvidia-gpu-operator-kubevirt.yaml", LATEST, "no"): ([], 0),
    ("nvidia-gpu-operator-kubevirt.yaml", V1_0, "auto"): (
        [
            (19, "wrong-mdev-resource-name", "v1.0.1 advertises 'NVIDIA A10-12Q' as nvidia.com/A10-12Q"),
            (33, "wrong-resource-name", "v1.0.1 has no name for 10DE:2236: it advertises nvidia.com/2236"),
        ],
        0,
    ),
    ("nvidia-gpu-operator-kubevirt.yaml", V1_0, "yes"): (
        [
            (19, "wrong-mdev-resource-name", "as under auto: NVIDIA's plugin serves the entry"),
            (33, "wrong-resource-name", "as under auto: NVIDIA's plugin serves the entry"),
        ],
        0,
    ),
    # The same page in 2022 (GPU Operator v22.9.0): its permittedHostDevices
    # stands beside `configuration:` (left empty), directly under the
    # KubeVirt CR's spec, where KubeVirt never reads it (its CRD has no such
    # field: kubectl refuses it, the API server prunes it), whatever the
    # profile or plugin. With `spec.configuration` there the kind-less
    # document is a KubeVirt CR's, not a HyperConverged CR's:
    # pciVendorSelector is right. The names are right for the newest plugin
    # and wrong for v1.0.1 as above.
    ("nvidia-gpu-operator-kubevirt-2022.yaml", LATEST, "auto"): (
        [(16, "misplaced-permitted-host-devices", "KubeVirt reads spec.configuration.permittedHostDevices")],
        0,
    ),
    ("nvidia-gpu-operator-kubevirt-2022.yaml", LATEST, "yes"): (
        [(16, "misplaced-permitted-host-devices", "as under auto")],
        0,
    ),
    ("nvidia-gpu-operator-kubevirt-2022.yaml", V1_0, "auto"): (
        [
            (16, "misplaced-permitted-host-devices", "as under the newest plugin"),
            (20, "wrong-resource-name", "v1.0.1 has no name for 10DE:2236: it advertises nvidia.com/2236"),
            (24, "wrong-mdev-resource-name", "v1.0.1 advertises 'NVIDIA A10-24Q' as nvidia.com/A10-24Q"),
        ],
        0,
    ),
    # NVIDIA's OpenShift Virtualization page: kind-less snippets of the
    # HyperConverged CR's spec (spec.permittedHostDevices, no configuration),
    # read as that CR, so pciDeviceSelector is the right field (it was
    # wrong-selector-field before lint read them so). Names as above.
    ("nvidia-openshift-virtualization-hco.yaml", LATEST, "auto"): ([], 0),
    ("nvidia-openshift-virtualization-hco.yaml", LATEST, "yes"): ([], 0),
    ("nvidia-openshift-virtualization-hco.yaml", LATEST, "no"): ([], 0),
    ("nvidia-openshift-virtualization-hco.yaml", V1_0, "auto"): (
        [
            (16, "wrong-resource-name", "v1.0.1 has no name for 10DE:2236: it advertises nvidia.com/2236"),
            (27, "wrong-mdev-resource-name", "v1.0.1 advertises 'NVIDIA A10-12Q' as nvidia.com/A10-12Q"),
        ],
        0,
    ),
}

#: Real mistakes lint does not report: (file, profile, --nvidia-plugin) ->
#: (the line a finding would be on, why it is a mistake and why lint misses it).
#:
#: Under ``yes``, an entry KubeVirt's own plugin serves (no
#: externalResourceProvider) for a GPU NVIDIA's plugin serves too, under a
#: name that is not NVIDIA's: both plugins hand out the same GPUs, under two
#: names. Not reported on purpose: the entry looks exactly like the SR-IOV
#: vGPU VFs of cozystack-gpu-vgpu-sriov.yaml (10DE:26B9 as
#: nvidia.com/L40S-24Q), which NVIDIA's plugin does not serve and which must
#: stay clean; nothing in an entry tells the two apart.
KNOWN_MISSED: dict[tuple[str, str, str], list[tuple[int, str]]] = {
    ("kubevirt-devel-host-devices.yaml", LATEST, "yes"): [
        (
            15,
            "NVIDIA's plugin serves 10DE:1EB8 as TU104GL_TESLA_T4, KubeVirt's as TU104GL_Tesla_T4: one T4, two plugins",
        ),
    ],
    ("openshift-docs-pci-host-devices-hco.yaml", LATEST, "yes"): [
        (15, "NVIDIA's plugin serves 10DE:1DB6 as GV100GL_TESLA_V100_PCIE_32GB, KubeVirt's as GV100GL_Tesla_V100"),
        (17, "NVIDIA's plugin serves 10DE:1EB8 as TU104GL_TESLA_T4, KubeVirt's as TU104GL_Tesla_T4"),
    ],
    ("openshift-docs-pci-host-devices-hco.yaml", V1_0, "yes"): [
        (15, "v1.0.1 serves 10DE:1DB6 as GV100GL_Tesla_V100_PCIe_32GB, KubeVirt's plugin as GV100GL_Tesla_V100"),
    ],
}

#: (profile, --nvidia-plugin) -> the findings of files linted alone that
#: linting every corpus file in one run rightly drops: (file, line, code,
#: why). One run is one cluster's input: a VM's name that another file's
#: entry permits for KubeVirt's own plugin (an entry without a finding) is
#: served as written. Under ``yes`` those entries are KNOWN_MISSED: were they
#: reported, the VMs' name would be checked as NVIDIA's plugin's again.
_PERMITS_T4 = (
    "kubevirt-devel-host-devices.yaml and openshift-docs-pci-host-devices-hco.yaml permit "
    "TU104GL_Tesla_T4 for KubeVirt's own plugin"
)
TOGETHER_DROPPED: dict[tuple[str, str], list[tuple[str, int, str, str]]] = {
    (LATEST, plugin): [
        ("kubevirt-user-guide-vmi-gpus.yaml", 11, "unknown-resource-name", _PERMITS_T4),
        ("openshift-docs-vm-gpus.yaml", 13, "unknown-resource-name", _PERMITS_T4),
    ]
    for plugin in ("auto", "yes", "no")
}
#: The findings linting every corpus file in one run adds: (file, line,
#: code, why). The KubeVirt CRs of two files list no HostDevices gate, so
#: the other files' VMs with hostDevices are the admitter's rejection; each
#: file alone says in a note that the gate was not checked (a note the
#: finding replaces).
_NO_HOST_DEVICES_GATE = (
    "the KubeVirt CRs of kubevirt-devel-host-devices.yaml and kubevirt-user-guide-host-devices.yaml list no "
    "HostDevices gate"
)
TOGETHER_ADDED: list[tuple[str, int, str, str]] = [
    ("cozystack-gpu-vgpu-sriov.yaml", 39, "missing-feature-gate", _NO_HOST_DEVICES_GATE),
    ("kubevirt-user-guide-vmi-gpus.yaml", 16, "missing-feature-gate", _NO_HOST_DEVICES_GATE),
]
#: The notes linting every corpus file in one run drops: a VM's vGPU name
#: alone has no permittedHostDevices to be checked against (a note each);
#: together, other files' KubeVirt and HyperConverged CRs permit them.
TOGETHER_NOTES_DROPPED = [
    (
        "kubevirt-user-guide-vmi-gpus.yaml",
        13,
        "nvidia.com/GRID_T4-1Q: kubevirt-user-guide-host-devices.yaml permits it",
    ),
    ("openshift-docs-vm-gpus.yaml", 15, "nvidia.com/GRID_T4-2Q: openshift-docs-mediated-devices-hco.yaml permits it"),
]
TOGETHER_MODES = [(profile, plugin) for profile in (LATEST, V1_0) for plugin in ("auto", "yes", "no")]


def test_every_corpus_file_has_expectations_and_a_source():
    files = sorted(p.name for p in CORPUS.glob("*.yaml"))
    assert files == sorted({file for file, _, _ in EXPECTED})
    sources = (CORPUS / "SOURCES").read_text(encoding="utf-8")
    for name in files:
        entry = ("\n" + sources).split(f"\n{name}\n", 1)[1].split("\n\n", 1)[0]
        commit = entry.split("commit: ", 1)[1][:40]
        assert "repository: github.com/" in entry and "licence: " in entry, name
        assert commit in (CORPUS / name).read_text(encoding="utf-8"), name  # the file's header names it too


@pytest.mark.parametrize(("file", "profile", "plugin"), sorted(EXPECTED))
def test_lint_finds_exactly_the_expected(file, profile, plugin):
    linter = Linter(profile, nvidia_plugin=plugin)
    linter.add_text((CORPUS / file).read_text(encoding="utf-8"), file)
    findings = [(f.line, f.code) for f in linter.run()]
    expected, notes = EXPECTED[file, profile, plugin]
    assert findings == [(line, code) for line, code, _reason in expected]
    assert len(linter.notes) == notes


def _lint(files, profile, plugin):
    linter = Linter(profile, nvidia_plugin=plugin)
    for file in files:
        linter.add_text((CORPUS / file).read_text(encoding="utf-8"), file)
    return [(f.file, f.line, f.code) for f in linter.run()], len(linter.notes)


@pytest.mark.parametrize(
    ("file", "profile", "plugin", "line"),
    [
        pytest.param(file, profile, plugin, line, marks=pytest.mark.xfail(strict=True, reason=reason))
        for (file, profile, plugin), missed in sorted(KNOWN_MISSED.items())
        for line, reason in missed
    ],
)
def test_known_missed(file, profile, plugin, line):
    findings, _ = _lint([file], profile, plugin)
    assert line in {found for _, found, _ in findings}


def test_known_missed_are_not_expected():
    """A known miss is in no expectation of its file and mode: EXPECTED
    lists what lint reports, KNOWN_MISSED what it should and does not."""
    for (file, profile, plugin), missed in KNOWN_MISSED.items():
        expected = EXPECTED.get((file, profile, plugin), ([], 0))[0]
        assert not {line for line, _ in missed} & {line for line, _, _ in expected}, (file, profile, plugin)


@pytest.mark.parametrize(("profile", "plugin"), TOGETHER_MODES)
def test_the_corpus_linted_together_finds_what_each_file_finds_alone(profile, plugin):
    """Every corpus file in one Linter run: the union of the files' own
    findings (in file order) and notes, but for TOGETHER_DROPPED and
    TOGETHER_ADDED (each added finding in place of its file's note)."""
    files = sorted(p.name for p in CORPUS.glob("*.yaml"))
    alone: list[tuple[str, int, str]] = []
    notes = 0
    for file in files:
        findings, count = _lint([file], profile, plugin)
        alone += findings
        notes += count
    dropped = [(file, line, code) for file, line, code, _why in TOGETHER_DROPPED.get((profile, plugin), [])]
    added = [(file, line, code) for file, line, code, _why in TOGETHER_ADDED]
    assert set(dropped) <= set(alone) and not set(added) & set(alone)
    kept = sorted([f for f in alone if f not in dropped] + added, key=lambda f: (files.index(f[0]), f[1]))
    assert _lint(files, profile, plugin) == (kept, notes - len(added) - len(TOGETHER_NOTES_DROPPED))
