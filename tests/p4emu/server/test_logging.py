"""p4emu-switch logging: human lines on the console, JSON lines in --log-file."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest

from p4emu.server.main import configure_logging
from p4emu.server.options import parse_options


@pytest.fixture(autouse=True)
def restore_p4emu_logger():
    logger = logging.getLogger("p4emu")
    saved = (list(logger.handlers), logger.level)
    yield
    for handler in logger.handlers:
        handler.close()
    logger.handlers[:] = saved[0]
    logger.setLevel(saved[1])


def test_log_file_gets_one_json_object_per_line_and_console_is_human(tmp_path: Path) -> None:
    log_file = tmp_path / "switch.log"
    console = io.StringIO()
    configure_logging(
        parse_options(["--no-p4", "--log-console", "-L", "debug", "--log-file", str(log_file)]),
        console,
    )
    logger = logging.getLogger("p4emu.server")
    logger.info("port %d set %s", 3, "down")
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("housekeeping failed")
    for handler in logging.getLogger("p4emu").handlers:
        handler.flush()
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [(r["level"], r["logger"], r["msg"]) for r in records] == [
        ("info", "p4emu.server", "port 3 set down"),
        ("error", "p4emu.server", "housekeeping failed"),
    ]
    assert "ValueError: boom" in records[1]["exc"]
    assert "INFO p4emu.server: port 3 set down" in console.getvalue()


def test_default_logging_only_shows_warnings(tmp_path: Path) -> None:
    console = io.StringIO()
    configure_logging(parse_options(["--no-p4"]), console)
    logging.getLogger("p4emu.server").info("quiet")
    logging.getLogger("p4emu.server").warning("loud")
    assert console.getvalue() == "p4emu-switch: WARNING: loud\n"


def test_log_level_off_silences_everything(tmp_path: Path) -> None:
    console = io.StringIO()
    configure_logging(parse_options(["--no-p4", "--log-console", "-L", "off"]), console)
    logging.getLogger("p4emu.server").error("nothing")
    assert console.getvalue() == ""
