from __future__ import annotations

from pathlib import Path

import pytest

from p4emu.bundle import (
    DeviceConfigError,
    MaterializedBundle,
    bundle_program,
    device_config_for,
    parse_device_config,
)


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
            "stay inside the bundle",
        ),
    ],
)
def test_bad_device_configs_are_explained(data: bytes, message: str) -> None:
    with pytest.raises(DeviceConfigError, match=message.replace("(", r"\(")):
        parse_device_config(data)


def test_missing_program(tmp_path: Path) -> None:
    with pytest.raises(DeviceConfigError, match="does not exist"):
        bundle_program(tmp_path / "nope.p4")
