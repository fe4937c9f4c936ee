"""Loading bundled and user topology files, and writing them back."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import topologies
from topologies import TopologyFileError, TopologySpecError, load, loads, to_mapping

EXPECTED_BUNDLED = {
    # name: (planes, t0 per plane, t1 per plane, nics per t0)
    "tiny": (2, 2, 2, 2),
    "small": (4, 4, 2, 2),
    "paper-8plane": (8, 8, 4, 4),
}


def test_bundled_names_lists_the_shipped_files() -> None:
    assert topologies.bundled_names() == sorted(EXPECTED_BUNDLED)


@pytest.mark.parametrize("name", sorted(EXPECTED_BUNDLED))
def test_each_bundled_file_loads_with_its_documented_shape(name: str) -> None:
    planes, t0, t1, nics_per_t0 = EXPECTED_BUNDLED[name]
    topo = load(name)
    assert topo.name == name
    assert topo.source == f"{name}.yaml"
    assert topo.plane_count == planes
    assert all(p.t0_count == t0 and p.t1_count == t1 for p in topo.planes)
    assert topo.nics_per_t0 == nics_per_t0
    assert topo.nic_count == t0 * nics_per_t0
    assert topo.switch_count == planes * (t0 + t1)
    assert topo.link_count == planes * (t0 * nics_per_t0 + t0 * t1)
    assert len(list(topo.links())) == topo.link_count


def test_bundled_sizes_match_the_brief() -> None:
    assert load("tiny").nic_count == 4
    assert load("small").nic_count == 8
    assert load("paper-8plane").nic_count == 32


def test_load_accepts_a_bundled_name_with_the_yaml_suffix() -> None:
    assert load("tiny.yaml") == load("tiny")


def test_load_reads_a_file_path_and_names_the_topology_after_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("planes: 1\nt0_per_plane: 1\nt1_per_plane: 1\nnics_per_t0: 2\n")
    topo = load(path)
    assert topo.name == "mine"
    assert topo.source == str(path)
    assert topo.nic_count == 2


def test_an_existing_file_wins_over_a_bundled_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("tiny").write_text("planes: 1\nt0_per_plane: 1\nt1_per_plane: 1\nnics_per_t0: 1\n")
    assert load("tiny").plane_count == 1


def test_unknown_name_lists_the_bundled_topologies() -> None:
    with pytest.raises(TopologyFileError) as info:
        load("no-such-fabric")
    assert str(info.value) == (
        "no-such-fabric: no such topology file, and no bundled topology of that name "
        "(bundled: paper-8plane, small, tiny)"
    )


def test_a_file_that_is_not_utf8_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"planes: \xff\xfe\n")
    with pytest.raises(TopologyFileError, match=r"bad\.yaml: not UTF-8 text"):
        load(path)


def test_an_unreadable_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "locked.yaml"
    path.write_text("planes: 1\n")

    def refuse(self: Path, encoding: str | None = None) -> str:
        raise PermissionError(13, "Permission denied", str(self))

    # chmod does not stop root, so simulate the OS refusing the read.
    monkeypatch.setattr(Path, "read_text", refuse)
    with pytest.raises(TopologyFileError) as info:
        load(path)
    assert str(info.value) == f"{path}: cannot read: Permission denied"


def test_invalid_yaml_names_the_line() -> None:
    with pytest.raises(TopologyFileError) as info:
        loads("planes: 2\nlinks: [a, b\n", source="broken.yaml")
    message = str(info.value)
    assert message.startswith("broken.yaml: not valid YAML:")
    assert "line 3" in message


def test_loads_without_a_name_uses_the_source_stem() -> None:
    text = "planes: 1\nt0_per_plane: 1\nt1_per_plane: 1\nnics_per_t0: 1\n"
    assert loads(text, source="lab.yaml").name == "lab"
    assert loads(text).name == "topology"


LIST_FORM = """
name: mixed
planes:
  - {}
  - t1_per_plane: 3
    link_defaults: {delay_us: 2.5}
t0_per_plane: 2
t1_per_plane: 2
nics_per_t0: 1
link_defaults: {rate_gbps: 40, queue_packets: 32}
switches: {first_port: 4, cpu_port: 100}
addressing: {usid_block: "fcbb:cc00::/32", nic_prefix: "fd00:1:2::/48"}
links:
  - between: [p1-t0-0, p1-t1-0]
    uplink_index: 2
  - between: [p1-t1-2, p1-t0-0]
    uplink_index: 0
    rate_gbps: 10
  - between: [nic1, p0-t0-1]
    delay_us: 0
"""


def test_list_form_gives_per_plane_counts_and_link_defaults() -> None:
    topo = loads(LIST_FORM, source="mixed.yaml")
    assert [p.t1_count for p in topo.planes] == [2, 3]
    assert topo.planes[0].link_defaults == topologies.LinkParams(40.0, 1.0, 32)
    assert topo.planes[1].link_defaults == topologies.LinkParams(40.0, 2.5, 32)
    assert topo.switch_settings.first_port == 4
    assert topo.switch_settings.cpu_port == 100
    assert str(topo.addressing.usid_block) == "fcbb:cc00::/32"
    assert str(topo.addressing.nic_prefix) == "fd00:1:2::/48"


@pytest.mark.parametrize("topo_text", [LIST_FORM, None])
def test_to_mapping_round_trips_through_yaml(topo_text: str | None) -> None:
    topo = loads(topo_text, source="mixed.yaml") if topo_text else load("paper-8plane")
    text = yaml.safe_dump(to_mapping(topo), sort_keys=False)
    again = loads(text, source=topo.source)
    assert again == topo
    assert list(again.links()) == list(topo.links())


def test_cpu_port_defaults_to_two_below_the_port_space() -> None:
    base = "planes: 1\nt0_per_plane: 1\nt1_per_plane: 1\nnics_per_t0: 1\n"
    assert loads(base).switch_settings.cpu_port == 510
    assert loads(base + "switches: {port_bits: 10}\n").switch_settings.cpu_port == 1022


def test_spec_errors_carry_source_key_path_and_reason() -> None:
    with pytest.raises(TopologySpecError) as info:
        loads("planes: 0\nt0_per_plane: 1\nt1_per_plane: 1\nnics_per_t0: 1\n", source="x.yaml")
    assert (info.value.source, info.value.key_path) == ("x.yaml", "planes")
    assert info.value.reason == "must be a positive integer, got 0"
