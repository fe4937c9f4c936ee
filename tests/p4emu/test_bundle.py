from __future__ import annotations

from pathlib import Path

import pytest

from p4emu import bundle as bundle_module
from p4emu.bundle import (
    DeviceConfigError,
    MaterializedBundle,
    SourceBundle,
    bundle_program,
    device_config_for,
    parse_device_config,
)
from p4emu.exceptions import P4SourceError
from p4emu.frontend import load_program


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_single_file_program_is_sent_as_plain_source(tmp_path: Path) -> None:
    main = write(tmp_path / "a.p4", "#include <core.p4>\n")
    assert device_config_for(main) == b"#include <core.p4>\n"
    bundle = parse_device_config(b"#include <core.p4>\n")
    assert (bundle.main, bundle.files) == ("program.p4", {"program.p4": "#include <core.p4>\n"})


def test_multi_file_program_round_trips_through_a_bundle(tmp_path: Path) -> None:
    main = write(tmp_path / "prog" / "main.p4", '#include <v1model.p4>\n#include "inc/h.p4"\n')
    write(tmp_path / "prog" / "inc" / "h.p4", '#include "../common.p4"\nheader h_t { bit<8> x; }\n')
    write(tmp_path / "prog" / "common.p4", "const bit<8> C = 1;\n")
    write(tmp_path / "prog" / "unused.p4", "garbage")
    config = device_config_for(main)
    bundle = parse_device_config(config)
    assert bundle.main == "main.p4"
    assert sorted(bundle.files) == ["common.p4", "inc/h.p4", "main.p4"]
    with MaterializedBundle(bundle) as materialized:
        assert materialized.main.read_text() == main.read_text()
        assert (materialized.main.parent / "inc" / "h.p4").is_file()
        directory = materialized.main.parent
    assert not directory.exists()


def test_bundle_refuses_includes_outside_the_program_directory(tmp_path: Path) -> None:
    write(tmp_path / "outside.p4", "")
    main = write(tmp_path / "prog" / "main.p4", '#include "../outside.p4"\n')
    with pytest.raises(DeviceConfigError, match="outside the program's directory"):
        bundle_program(main)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "is empty"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"pipelines": [], "header_types": []}', "BMv2 JSON, which is not supported by p4emu"),
        (b"{not json", "does not parse"),
        (b'{"a": 1}', "not a 'p4emu-source-bundle'"),
        (b"[1]", "must be an object"),
        (b'{"format": "p4emu-source-bundle", "version": 9}', "version 9 is not supported"),
        (
            b'{"format": "p4emu-source-bundle", "version": 1, "main": "x", "files": {"y": ""}}',
            "must name one of its files",
        ),
        (
            b'{"format": "p4emu-source-bundle", "version": 1, "main": "x", "files": {"x": 3}}',
            "must map relative paths",
        ),
        (
            b'{"format": "p4emu-source-bundle", "version": 1, "main": "../x", "files": {"../x": ""}}',
            "plain relative path inside the bundle",
        ),
    ],
)
def test_bad_device_configs_are_explained(data: bytes, message: str) -> None:
    with pytest.raises(DeviceConfigError, match=message.replace("(", r"\(")):
        parse_device_config(data)


def test_missing_program(tmp_path: Path) -> None:
    with pytest.raises(DeviceConfigError, match="does not exist"):
        bundle_program(tmp_path / "nope.p4")


# --------------------------------------------------------------------------- limits and paths


def bundle_bytes(files: dict[str, str], main: str = "main.p4") -> bytes:
    return SourceBundle(main=main, files=files).to_bytes()


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "../x.p4", "a/../../x.p4", "./a.p4", "a//b.p4", "a/.", "", "a\x00b"]
)
def test_bundle_paths_must_be_plain_relative_paths(name: str) -> None:
    with pytest.raises(DeviceConfigError, match="must be a plain relative path inside the bundle"):
        parse_device_config(bundle_bytes({"main.p4": "", name: ""}))


def test_a_bundle_path_cannot_be_both_a_file_and_a_directory() -> None:
    with pytest.raises(DeviceConfigError, match=r"'inc/a\.p4' is below 'inc', which is a file"):
        parse_device_config(bundle_bytes({"main.p4": "", "inc": "", "inc/a.p4": ""}))


def test_bundle_size_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bundle_module, "MAX_SOURCE_FILE_BYTES", 100)
    with pytest.raises(DeviceConfigError, match=r"'big\.p4' is 101 bytes, over the per-file limit"):
        parse_device_config(bundle_bytes({"main.p4": "", "big.p4": "x" * 101}))
    with pytest.raises(DeviceConfigError, match=r"'program\.p4' is 101 bytes"):
        parse_device_config(b"y" * 101)
    monkeypatch.setattr(bundle_module, "MAX_TOTAL_SOURCE_BYTES", 150)
    with pytest.raises(DeviceConfigError, match="holds 160 bytes of source, over the limit of 150"):
        parse_device_config(bundle_bytes({"main.p4": "x" * 80, "b.p4": "x" * 80}))
    monkeypatch.setattr(bundle_module, "MAX_BUNDLE_FILES", 2)
    with pytest.raises(DeviceConfigError, match="has 3 files, over the limit of 2"):
        parse_device_config(bundle_bytes({"main.p4": "", "b.p4": "", "c.p4": ""}))
    monkeypatch.setattr(bundle_module, "MAX_DEVICE_CONFIG_BYTES", 10)
    with pytest.raises(DeviceConfigError, match="is 11 bytes, over the limit of 10"):
        parse_device_config(b"z" * 11)


@pytest.mark.parametrize("include", ['"/etc/passwd"', '"../../../../etc/hostname"'])
def test_a_bundle_include_cannot_reach_the_host(include: str) -> None:
    bundle = parse_device_config(bundle_bytes({"main.p4": f"#include {include}\n"}))
    with (
        MaterializedBundle(bundle) as materialized,
        pytest.raises(P4SourceError, match=r"refused: it leads outside the program"),
    ):
        load_program(materialized.main)
