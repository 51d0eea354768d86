"""Every CEL selector ``vm-gpus --dra`` writes compiles and, run by two real
CEL implementations, selects exactly the right GPU: cel-python (``celpy``)
and common-expression-language (``cel``, Rust's cel-interpreter), which must
agree on every verdict.

The devices are the slice entries NVIDIA's DRA driver publishes for vfio GPUs
(:func:`pciname.dra.claims.predicted_device`), one for EVERY NVIDIA device id
of the driver's pci.ids (go-nvlib's embedded copy, found here by the sha256
the facts name among the packaged snapshots and read independently of
pciname), and two ids that file does not name (``productName`` is then
go-nvlib's unknown-device text).

The device as DRA's CEL sees it (``device.driver``,
``device.attributes[domain].name``, ``device.capacity[domain].name``,
``device.allowMultipleAllocations``) is a typed object in kube-scheduler;
neither library here has that type, so the activation is built as nested
maps of the same shape: the stable attributes exactly as
:meth:`~pciname.dra.claims.PredictedDevice.cel_device` gives them, the
host-dependent ones (uuid, numa, iommuFDEnabled, pciBusID, pcieRoot) with
made-up values of the types the facts name, and ``addressableMemory`` as a
string (neither library has Kubernetes' Quantity; no selector reads it). A
map does not return an empty map for an unknown domain as DRA does; no
selector here reads another domain.

The allocator runs a request's selectors only on devices its DeviceClass's
selectors accept (kube-scheduler's structured allocator: class first); the
checks below evaluate in that order. Verdicts rest only on each library's
public API: compile, evaluate, and a result that must be a boolean.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import tarfile
from typing import Any

import cel
import celpy
import pytest
from celpy import celtypes
from hypothesis import HealthCheck, given, settings, strategies as st

from pciname.capabilities.vm_gpus import DEFAULT_NAME
from pciname.dra.claims import STABLE_ATTRIBUTES, dra_objects, predicted_device
from pciname.dra.facts import Combination, choose, facts
from tests.conftest import REPO

SNAPSHOTS = REPO / "data" / "snapshots.tar.xz"
NVIDIA = "10de"


# -- the devices ------------------------------------------------------------------------


def working_drivers() -> list[str]:
    """The driver releases of the combinations that work (selectors depend
    on the driver alone: a test below holds that)."""
    compatibility = facts()["compatibility"]
    return [d for d in facts()["driver_releases"] if any(e["works"] for e in compatibility[d].values())]


@functools.cache
def combination(driver: str) -> Combination:
    return choose(driver)


@functools.cache
def pciids_lines(sha256: str) -> tuple[str, ...]:
    """The lines of the packaged snapshot whose sha256 is ``sha256``."""
    with tarfile.open(SNAPSHOTS) as archive:
        for member in archive.getmembers():
            handle = archive.extractfile(member) if member.isfile() else None
            data = handle.read() if handle else b""
            if hashlib.sha256(data).hexdigest() == sha256:
                return tuple(data.decode("utf-8", "replace").splitlines())
    raise AssertionError(f"no packaged snapshot has sha256 {sha256}")


@functools.cache
def nvidia_ids(driver: str) -> dict[str, str]:
    """Every device id of the driver's pci.ids NVIDIA block -> its name, read
    plainly (vendor lines start in column 0, device lines with one tab)."""
    lines = pciids_lines(combination(driver).vfio["product_name"]["embedded"]["sha256"])
    vendors = [line for line in lines if re.match(rf"{NVIDIA}\s", line)]
    assert len(vendors) == 1, vendors  # one NVIDIA block: no later table replaces it
    found: dict[str, str] = {}
    inside = False
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        if not line.startswith("\t"):
            inside = line.startswith(f"{NVIDIA} ")
        elif inside and not line.startswith("\t\t"):
            ident, _, name = line[1:].partition("  ")
            assert re.fullmatch(r"[0-9a-f]{4}", ident), line
            found[ident] = name.strip()
    return found


@functools.cache
def device_ids(driver: str) -> tuple[str, ...]:
    """Every NVIDIA id of the driver's pci.ids, and two ids it does not name."""
    named = nvidia_ids(driver)
    unnamed = [f"{n:04x}" for n in range(0xFFFF, 0, -1) if f"{n:04x}" not in named][:2]
    return (*sorted(named), *unnamed)


_SAMPLE = {"string": "sample-{index}", "int": -1, "bool": False}


def dra_device(driver: str, device_id: str, index: int) -> dict[str, Any]:
    """The device as DRA CEL sees it, as nested maps (see the module text)."""
    predicted = predicted_device(device_id, combination(driver))
    device = predicted.cel_device()
    assert set(device["attributes"][predicted.driver]) == set(STABLE_ATTRIBUTES)
    vfio = combination(driver).vfio
    for attribute in vfio["attributes"]:
        domain, _, name = attribute["name"].rpartition("/")
        if name not in STABLE_ATTRIBUTES:
            value = _SAMPLE[attribute["type"]]
            device["attributes"].setdefault(domain, {})[name] = (
                value.format(index=index) if isinstance(value, str) else value
            )
    for capacity in vfio["capacity"]:
        domain, _, name = capacity["name"].rpartition("/")
        device.setdefault("capacity", {}).setdefault(domain, {})[name] = "24Gi"
    device["allowMultipleAllocations"] = False
    return device


@functools.cache
def devices(driver: str) -> tuple[dict[str, Any], ...]:
    return tuple(dra_device(driver, device_id, i) for i, device_id in enumerate(device_ids(driver)))


def others(driver: str) -> list[dict[str, Any]]:
    """Devices the vfio DeviceClass must not take: the same driver's other
    types, another driver's vfio device, a device of no domain at all."""
    base = devices(driver)[0]
    name = base["driver"]
    kinds = [
        {**base, "attributes": {**base["attributes"], name: {**base["attributes"][name], "type": kind}}}
        for kind in ("gpu", "mig", "VFIO", "vfio ")
    ]
    foreign = {"driver": "gpu.example.com", "attributes": {"gpu.example.com": dict(base["attributes"][name])}}
    disguised = {"driver": "gpu.example.com", "attributes": dict(base["attributes"])}  # another driver, our domain
    return [*kinds, foreign, disguised]


# -- two CEL implementations --------------------------------------------------------------

_ENV = celpy.Environment()


class Selector:
    """One CEL expression, compiled by both implementations."""

    def __init__(self, expression: str) -> None:
        self.expression = expression
        try:
            self.py = _ENV.program(_ENV.compile(expression))
        except Exception as error:  # noqa: BLE001 - any compile error fails the test
            raise AssertionError(f"celpy cannot compile {expression!r}: {error}") from None
        try:
            self.rust = cel.compile(expression)
        except Exception as error:  # noqa: BLE001
            raise AssertionError(f"cel cannot compile {expression!r}: {error}") from None

    def in_rust(self, context: Any) -> bool:
        try:
            verdict = self.rust.execute(context)
        except Exception as error:  # noqa: BLE001 - an evaluation error aborts allocation
            raise AssertionError(f"cel fails on {self.expression!r}: {error}") from None
        assert verdict is True or verdict is False, (self.expression, verdict)
        return verdict

    def in_python(self, device: dict[str, Any]) -> bool:
        try:
            verdict = self.py.evaluate({"device": celpy.json_to_cel(device)})
        except Exception as error:  # noqa: BLE001
            raise AssertionError(f"celpy fails on {self.expression!r}: {error}") from None
        assert isinstance(verdict, celtypes.BoolType), (self.expression, verdict)
        return bool(verdict)

    def __call__(self, device: dict[str, Any]) -> bool:
        """Both implementations' verdict, which must agree."""
        mine, theirs = self.in_python(device), self.in_rust({"device": device})
        assert mine == theirs, f"the CEL implementations disagree on {self.expression!r}: {mine} != {theirs}"
        return mine


@functools.cache
def written(driver: str, product_name: bool) -> tuple[tuple[str, ...], str]:
    """The request selector pciname writes for each device id (in
    :func:`device_ids` order) and the DeviceClass selector."""
    expressions = []
    deviceclass = ""
    for device_id in device_ids(driver):
        template, _, klass = dra_objects(
            [(device_id, 1)], combination(driver), name=DEFAULT_NAME, product_name=product_name
        ).documents
        (request,) = template["spec"]["spec"]["devices"]["requests"]
        (one,) = request.get("exactly", request)["selectors"]
        expressions.append(one["cel"]["expression"])
        (chosen,) = klass["spec"]["selectors"]
        assert deviceclass in ("", chosen["cel"]["expression"])
        deviceclass = chosen["cel"]["expression"]
    return tuple(expressions), deviceclass


@functools.cache
def selectors(driver: str, product_name: bool) -> tuple[tuple[Selector, ...], Selector]:
    expressions, deviceclass = written(driver, product_name)
    return tuple(Selector(e) for e in expressions), Selector(deviceclass)


def allocatable(klass: Selector, request: Selector, device: dict[str, Any]) -> bool:
    """Whether the allocator may give ``device`` to the request: its class's
    selector first, the request's only on what the class accepts."""
    return klass(device) and request(device)


DRIVERS = working_drivers()
KINDS = [False, True]


def content(driver: str) -> str:
    """What the CEL checks below read for a driver: the selectors of both
    kinds and the devices (the DeviceClass's rejects derive from those)."""
    return json.dumps([written(driver, False), written(driver, True), devices(driver)], sort_keys=True)


# The first driver of each group with the same :func:`content` (v0.4.1 writes
# and publishes what v0.4.0 does; main publishes another numa attribute): a
# verdict on it is the verdict on the others, so the costly checks run once
# per group. Written out, not computed, so collection stays cheap; the test
# below holds it.
DISTINCT = ["v0.4.0", "main"]


def test_each_driver_is_checked_through_one_with_the_same_selectors_and_devices():
    assert set(DISTINCT) <= set(DRIVERS) and len({content(d) for d in DISTINCT}) == len(DISTINCT)
    for driver in DRIVERS:
        assert any(content(driver) == content(first) for first in DISTINCT), driver


def test_the_devices_are_every_nvidia_id_of_the_drivers_pciids():
    assert DRIVERS == ["v0.4.0", "v0.4.1", "main"]
    for driver in DRIVERS:
        named = nvidia_ids(driver)
        assert len(named) > 1500 and "2236" in named and "20b5" in named
        assert len(device_ids(driver)) == len(named) + 2
        unknown = combination(driver).vfio["product_name"]["unknown"]
        for device_id, device in zip(device_ids(driver), devices(driver)):
            attributes = device["attributes"][device["driver"]]
            assert attributes["deviceID"] == f"0x{device_id}" and attributes["vendorID"] == "0x10de"
            assert attributes["productName"] == named.get(device_id, unknown)


def test_the_selectors_are_the_same_for_every_working_combination():
    """What pciname writes for a driver does not depend on KubeVirt or the
    API version (so the devices above stand for every working combination)."""
    compatibility = facts()["compatibility"]
    for driver in DRIVERS:
        for kubevirt in (k for k, e in compatibility[driver].items() if e["works"]):
            for api in ("v1", "v1beta2", "v1beta1"):
                for product_name in KINDS:
                    objects = dra_objects(
                        [("2236", 1), ("20b5", 1)],
                        choose(driver, kubevirt, api),
                        name=DEFAULT_NAME,
                        product_name=product_name,
                    )
                    template, _, klass = objects.documents
                    found = [
                        r.get("exactly", r)["selectors"][0]["cel"]["expression"]
                        for r in template["spec"]["spec"]["devices"]["requests"]
                    ]
                    expressions, deviceclass = written(driver, product_name)
                    ids = device_ids(driver)
                    assert found == [expressions[ids.index("2236")], expressions[ids.index("20b5")]]
                    assert klass["spec"]["selectors"][0]["cel"]["expression"] == deviceclass


@pytest.mark.parametrize("driver", DISTINCT)
@pytest.mark.parametrize("product_name", KINDS)
def test_every_selector_compiles_in_both_implementations(driver, product_name):
    requests, klass = selectors(driver, product_name)
    assert len(requests) == len(device_ids(driver)) and len(set(s.expression for s in requests)) == len(requests)
    assert klass.expression == combination(driver).vfio["device_class"]["selector"]


@pytest.mark.parametrize("driver", DISTINCT)
def test_the_deviceclass_selector_takes_every_vfio_gpu_and_nothing_else(driver):
    _, klass = selectors(driver, False)
    assert all(klass(device) for device in devices(driver))
    assert not any(klass(device) for device in others(driver))


@pytest.mark.parametrize("driver", DISTINCT)
@pytest.mark.parametrize("product_name", KINDS)
def test_each_selector_takes_its_own_gpu(driver, product_name):
    requests, klass = selectors(driver, product_name)
    missed = [s.expression for s, device in zip(requests, devices(driver)) if not allocatable(klass, s, device)]
    assert missed == []


@pytest.mark.parametrize("driver", DISTINCT)
def test_no_selector_takes_another_gpu(driver):
    """Exhaustive: every vendor-and-device-id selector against every device
    (Rust's implementation, fast enough for all 3.7 million pairs; both
    agree on a sample below)."""
    requests, _ = selectors(driver, False)
    contexts = [cel.Context(variables={"device": device}) for device in devices(driver)]
    wrong = {}
    for i, request in enumerate(requests):
        execute = request.rust.execute  # in_rust's checks, inlined for 3.7 million calls
        verdicts = [execute(context) for context in contexts]
        assert all(v is True or v is False for v in verdicts), request.expression
        taken = [j for j, verdict in enumerate(verdicts) if verdict]
        if taken != [i]:
            wrong[request.expression] = [device_ids(driver)[j] for j in taken]
    assert wrong == {}


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_product_name_selector_narrows_the_id_selector(driver):
    """``--product-name`` selectors are the id selector ``&&`` one more
    clause, so by CEL's ``&&`` (false whatever the other side, even an
    error) each takes at most what the id selector takes: its own GPU, by
    the exhaustive test above (and it does take it, by the test before)."""
    plain, _ = written(driver, False)
    named, _ = written(driver, True)
    for device_id, by_id, by_name in zip(device_ids(driver), plain, named):
        assert by_name.startswith(f"{by_id} && ") and by_name.count("&&") == by_id.count("&&") + 1, device_id
        assert by_name.endswith(
            f".productName == {json.dumps(predicted_device(device_id, combination(driver)).attributes['productName'])}"
        )


@pytest.mark.parametrize("driver", DISTINCT)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_both_implementations_agree_on_pairs_and_near_misses(driver, data):
    """A sample of (selector, device) pairs, each also against near misses of
    its own device: the id in upper case, another vendor, the product name
    changed in case or spacing. Only the own, unchanged device is taken."""
    ids = device_ids(driver)
    product_name = data.draw(st.booleans())
    requests, klass = selectors(driver, product_name)
    i = data.draw(st.integers(0, len(ids) - 1))
    j = data.draw(st.integers(0, len(ids) - 1))
    assert allocatable(klass, requests[i], devices(driver)[j]) is (i == j)
    own = devices(driver)[i]
    name = own["driver"]
    attributes = own["attributes"][name]
    misses = [
        {"deviceID": attributes["deviceID"].upper()},
        {"deviceID": attributes["deviceID"].removeprefix("0x")},
        {"vendorID": "0x10DE"},
        {"vendorID": "0x1002"},
    ]
    if product_name:
        misses += [{"productName": attributes["productName"].upper()}, {"productName": attributes["productName"] + " "}]
    for change in misses:
        if all(attributes[k] == v for k, v in change.items()):
            continue  # no change (an id of digits only, a name in upper case already)
        near = {**own, "attributes": {**own["attributes"], name: {**attributes, **change}}}
        assert allocatable(klass, requests[i], near) is False, change
