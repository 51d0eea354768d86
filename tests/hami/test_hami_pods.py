"""HAMi's checks of one container's resources (pciname.hami.pods), per release facts."""

from __future__ import annotations

from pciname.hami.pods import check_container
from pciname.hami.releases import release

V281 = release("v2.8.1")


def _codes(resources, **options):
    return [finding.code for finding in check_container(V281, resources, **options)]


def test_a_container_with_gpu_memory_and_cores_is_clean():
    assert _codes({"nvidia.com/gpu": "1", "nvidia.com/gpumem": "3000", "nvidia.com/gpucores": "30"}) == []


def test_names_beyond_the_charts_are_errors():
    findings = check_container(V281, {"nvidia.com/gpu": "1", "nvidia.com/gpumemory": "3000", "nvidia.com/GPUmem": "1"})
    assert [f.code for f in findings][:2] == ["hami-unknown-name", "hami-unknown-name"]
    assert findings[0].message.startswith("nvidia.com/gpumemory: not a name HAMi v2.8.1 registers")


def test_cores_outside_0_to_100_and_not_a_number():
    assert _codes({"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1", "nvidia.com/gpucores": "101"}) == [
        "hami-cores-range"
    ]
    assert _codes({"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1", "nvidia.com/gpucores": "50m"}) == [
        "hami-cores-range"
    ]
    assert _codes({"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1", "nvidia.com/gpucores": "100"}) == []
    assert _codes({"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1", "nvidia.com/gpucores": "0"}) == []


def test_memory_with_percentage_and_split_names_without_the_gpu():
    both = {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1000", "nvidia.com/gpumem-percentage": "50"}
    assert _codes(both) == ["hami-mem-and-percentage"]
    (finding,) = check_container(release("v2.8.1"), both)
    assert finding.message.endswith("HAMi takes nvidia.com/gpumem and ignores nvidia.com/gpumem-percentage")
    assert finding.name == "nvidia.com/gpumem-percentage"
    # Without nvidia.com/gpu HAMi reads neither: that, not which one it takes, is the finding.
    assert _codes({"nvidia.com/gpumem": "1000", "nvidia.com/gpumem-percentage": "50"}) == ["hami-without-gpu"]
    assert _codes({"nvidia.com/gpumem": "1000", "nvidia.com/gpucores": "10"}) == ["hami-without-gpu"]


def test_memory_left_out_takes_the_whole_memory_unless_a_percentage_is_given():
    findings = check_container(V281, {"nvidia.com/gpu": "2"})
    assert [(f.code, f.severity) for f in findings] == [("hami-whole-memory", "note")]
    assert _codes({"nvidia.com/gpu": "1", "nvidia.com/gpumem-percentage": "25"}) == []


def test_a_count_above_what_a_node_advertises_and_names_in_a_vm():
    assert _codes({"nvidia.com/gpu": "21", "nvidia.com/gpumem": "1"}, gpus_per_node=2) == ["hami-count"]
    assert _codes({"nvidia.com/gpu": "20", "nvidia.com/gpumem": "1"}, gpus_per_node=2) == []
    assert _codes({"nvidia.com/gpu": "1", "nvidia.com/gpumem": "1"}, in_vm=True) == ["hami-in-vm"]
