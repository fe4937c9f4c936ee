"""Hypothesis-driven robustness (bounded in time): random bytes through every p4src/ program,
random well-formed-but-wrong programs and random source bundles through the front end and
the compiler. The only outcomes: a clean verdict, or a P4EmuError whose message starts with
a location (``file:line:col: error:``) or names the bad bundle field. No other exception."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from frontend_helpers import v1_source
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p4emu.backend import compile_program
from p4emu.bundle import DeviceConfigError, MaterializedBundle, parse_device_config
from p4emu.exceptions import P4EmuError
from p4emu.frontend import load_program, load_program_text
from p4emu.runtime.clock import VirtualClock
from p4emu.switch import Switch

ROOT = Path(__file__).resolve().parents[3]
P4SRC = sorted((ROOT / "p4src").glob("*.p4"))
LOCATED = re.compile(r"^[^\n:]+:\d+:\d+: error: ")
BOUNDED = settings(
    max_examples=80, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


def located(error: P4EmuError) -> None:
    assert LOCATED.match(str(error)), str(error)


# --------------------------------------------------------------------------- packets


@pytest.fixture(scope="module", params=P4SRC, ids=lambda p: p.name)
def p4src_switch(request: pytest.FixtureRequest) -> Switch:
    return Switch(request.param, clock=VirtualClock(), cpu_port=510, priority_queues=8)


IPV6_ETHERNET = bytes.fromhex("0a000000140002010000000086dd")


@BOUNDED
@given(
    st.binary(max_size=300),
    st.booleans(),
    st.integers(min_value=0, max_value=511),
)
def test_random_bytes_through_p4src(p4src_switch: Switch, body: bytes, ipv6: bool, port: int):
    frame = (IPV6_ETHERNET + b"\x60" + body) if ipv6 else body
    p4src_switch.inject(port, frame)  # a clean verdict: forwarded, punted or dropped
    p4src_switch.run_until_idle()
    for out_port, data in p4src_switch.collect():
        assert 0 <= out_port <= 511 and isinstance(data, bytes)


# --------------------------------------------------------------------------- programs

IDENT = st.sampled_from(["hdr.h.a", "hdr.h.b", "hdr.h.c", "meta.x", "meta.flag", "sm.egress_spec",
                         "nope", "hdr.h", "hdr", "error.NoError", "true", "hdr.h.a[3:0]"])  # fmt: skip
VALUE = st.sampled_from(["0", "1", "8w255", "16w1", "-1", "(bit<4>)3", "true", "hdr.h.isValid()",
                         "1 << 40", "{1, 2}", "meta.x ++ meta.x", "(int<8>)-1", "8s3",
                         "error.NoMatch", "hdr.h.c / 0", "0x1FF"])  # fmt: skip
STATEMENT = st.one_of(
    st.builds("{} = {};".format, IDENT, VALUE),
    st.builds("if ({}) {{ {} = {}; }}".format, VALUE, IDENT, VALUE),
    st.builds("{}.setValid();".format, IDENT),
    st.builds("mark_to_drop({});".format, IDENT),
    st.builds("{} = {} + {};".format, IDENT, VALUE, VALUE),
    st.builds("t.apply(); {} = {};".format, IDENT, VALUE),
    st.sampled_from(["exit;", "return;", "hdr.h.a[9:0] = 1;", "bit<0> z = 0;", "hdr.h[1].a = 1;"]),
)
LOCAL = st.sampled_from([
    "", "action a(bit<8> v) { hdr.h.a = v; } table t { key = { hdr.h.a: exact; } actions = { a; } }",
    "table t { key = { hdr.h: exact; } actions = { NoAction; } }",
    "table t { key = { hdr.h.a: fancy; } actions = { NoAction; } }",
    "table t { actions = { a; } }",
    "action a(inout bit<8> v, bit<8> w) { v = w; } table t { actions = { a(meta.x); } }",
    "register<bit<8>>(0) r; table t { actions = { NoAction; } }",
    "table t { key = { hdr.h.b: ternary; } actions = { NoAction; } const entries = { 1: NoAction(); } }",
])  # fmt: skip
DECL = st.sampled_from([
    "", "struct s_t { s_t inner; }", "header x_t { varbit<8> v; varbit<8> w; }",
    "enum bit<4> E { A = 16 }", "const bit<8> K = K;", "typedef bit<8> h_t;",
    "extern void f(in bit<8> x);", "header y_t { bit<7> odd; }", "#include \"/etc/passwd\"",
])  # fmt: skip


@BOUNDED
@given(DECL, LOCAL, st.lists(STATEMENT, min_size=1, max_size=4))
def test_wrong_programs_fail_with_a_location(decl: str, local: str, statements: list[str]):
    source = v1_source(decls=decl, ingress_locals=local, ingress="\n".join(statements))
    try:
        compile_program(load_program_text(source, "fuzz.p4"))
    except P4EmuError as error:
        located(error)


# --------------------------------------------------------------------------- bundles

NAME = st.sampled_from(["main.p4", "inc/a.p4", "../x.p4", "/etc/passwd", "a//b.p4", "", "inc"])
INCLUDE = st.sampled_from(['"inc/a.p4"', '"../../etc/hostname"', '"/etc/passwd"', "<core.p4>",
                           '"main.p4"', '"missing.p4"', "<../../x>", '"/dev/zero"'])  # fmt: skip


@BOUNDED
@given(
    st.dictionaries(NAME, st.lists(INCLUDE, max_size=3), max_size=4),
    st.one_of(NAME, st.integers(), st.none()),
    st.sampled_from([1, 2, "1", None]),
)
def test_random_bundles_fail_cleanly(files, main, version) -> None:
    document = {
        "format": "p4emu-source-bundle",
        "version": version,
        "main": main,
        "files": {name: "".join(f"#include {i}\n" for i in incs) for name, incs in files.items()},
    }
    try:
        bundle = parse_device_config(json.dumps(document).encode())
    except DeviceConfigError as error:
        assert str(error).startswith(("source bundle", "p4_device_config")), str(error)
        return
    with MaterializedBundle(bundle) as materialized:
        try:
            load_program(materialized.main)
        except P4EmuError as error:
            located(error)
            assert "root:" not in str(error)  # nothing of a host file comes back
