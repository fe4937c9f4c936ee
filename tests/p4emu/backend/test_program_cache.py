"""Templates kept with their checked program (p4emu.backend.program, "kept on disk"): a
later process compiles its first switch from the kept template without generating, and
that switch behaves as a generated one; a damaged, stale or unfitting kept template is
generated again (never an error, never another program); programs that did not come from
the checked-program cache keep nothing."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path
from typing import Any

import pytest

from p4emu.backend import program
from p4emu.backend.program import compile_program, compile_stats
from p4emu.frontend import ast, cache, load_checked, load_program
from p4emu.runtime import hashes
from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.tables import Exact
from p4emu.switch import Switch

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> kind; bit<8> k; bit<8> v; bit<16> sum; }
struct headers_t { h_t h; }
struct digest_t { bit<8> k; }
struct meta_t { bit<8> unused; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<8>>(4) kinds;
    state start { transition select(pkt.lookahead<bit<8>>()) { kinds: parse_h; default: accept; } }
    state parse_h { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(4) last;
    counter(8, CounterType.packets) hits;
    action set(bit<9> port, bit<8> v) { sm.egress_spec = port; hdr.h.v = v; }
    action drop() { mark_to_drop(sm); }
    action note() { digest<digest_t>(1, {hdr.h.k}); }
    table t { key = { hdr.h.k: exact; } actions = { set; drop; } default_action = drop(); }
    apply {
        if (!hdr.h.isValid()) { mark_to_drop(sm); return; }
        last.write(0, hdr.h.k);
        hits.count((bit<32>)hdr.h.k);
        log_msg("k={}", {hdr.h.k});
        hash(hdr.h.sum, HashAlgorithm.crc16_custom, 16w0, {hdr.h.k}, 32w65535);
        note();
        t.apply();
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""

SLOT = program._template_slot((511, False, False))


@pytest.fixture
def source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The program's file, with a checked-program cache of the test's own and no
    template of this process yet (as in a new process)."""
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(program, "_templates", weakref.WeakValueDictionary())
    path = tmp_path / "kept.p4"
    path.write_text(PROGRAM, encoding="utf-8")
    return path


def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget this process's templates (a later process has only the disk's)."""
    monkeypatch.setattr(program, "_templates", weakref.WeakValueDictionary())


def counts() -> tuple[int, int, int]:
    stats = compile_stats()
    return stats.generated, stats.reused, stats.loaded


def compiles(checked: ast.CheckedProgram) -> tuple[Switch, tuple[int, int, int]]:
    """A switch of ``checked`` and how its compile went (generated, reused, loaded)."""
    before = counts()
    switch = Switch(checked, clock=VirtualClock(), seed=3)
    after = counts()
    return switch, (after[0] - before[0], after[1] - before[1], after[2] - before[2])


def behaviour(switch: Switch) -> tuple[Any, ...]:
    """What ``switch`` does with a few packets, in comparable form."""
    objects = switch.objects
    set_id = objects.actions["Ing.set"].id
    objects.value_sets["P.kinds"].add([Exact(1)])
    objects.tables["Ing.t"].insert([Exact(5)], set_id, [2, 0x42])
    objects.hash_crcs[next(iter(objects.hash_crcs))].configure(
        hashes.CrcConfig(0x1021, 0xFFFF, 0, False, False)
    )
    logs: list[str] = []
    switch.log_callback = logs.append
    out = []
    for k in (5, 7, 5):
        switch.inject(1, bytes([1, k, 0, 0, 0]))
        out.append(switch.collect())
    digests = [(d.digest_id, d.samples) for d in switch.digest_queue.poll()]
    return (
        out,
        logs,
        objects.registers["Ing.last"].get(0),
        [objects.counters["Ing.hits"].read(k)[0] for k in range(8)],
        sorted((name, info.id) for name, info in objects.actions.items()),
        sorted((name, info.id) for name, info in objects.digests.items()),
        sorted(objects.hash_crcs),
        digests,
        switch.program.source,
        switch.p4info,
    )


def test_a_later_process_loads_the_template_and_behaves_the_same(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, how = compiles(load_checked(source))
    assert how == (1, 0, 0)
    second, how = compiles(first.program.checked)
    assert how == (0, 1, 0)
    new_process(monkeypatch)
    checked = load_checked(source)  # read from the entry: a new object, with companions
    assert checked is not first.program.checked
    assert cache.companion(checked, SLOT, program.generator_digest()) is not None
    loaded, how = compiles(checked)
    assert how == (0, 0, 1)
    assert loaded.program.template is not None and loaded.program.template.checked is checked
    further, how = compiles(checked)
    assert how == (0, 1, 0)
    assert behaviour(loaded) == behaviour(first)
    assert behaviour(further) == behaviour(second)
    assert loaded.program.error_codes == first.program.error_codes
    assert loaded.program.has_compute_checksum == first.program.has_compute_checksum


def test_other_options_are_another_slot(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compile_program(load_checked(source))
    new_process(monkeypatch)
    before = counts()
    compile_program(load_checked(source), drop_port=100)
    assert counts()[0] == before[0] + 1
    new_process(monkeypatch)
    before = counts()
    compile_program(load_checked(source), drop_port=100)
    compile_program(load_checked(source))  # both slots kept
    assert counts()[2] == before[2] + 2 and counts()[0] == before[0]


def replace_kept(checked: ast.CheckedProgram, change: Any) -> None:
    """Keep ``change(kept template)`` in place of ``checked``'s kept template."""
    digest = program.generator_digest()
    kept = cache.companion(checked, SLOT, digest)
    assert kept is not None
    assert cache.keep_companion(checked, SLOT, digest, change(kept))


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda kept: ["not", "a", "template"], id="not-a-dict"),
        pytest.param(lambda kept: {k: v for k, v in kept.items() if k != "origins"}, id="part"),
        pytest.param(lambda kept: {**kept, "source": 42}, id="type"),
        pytest.param(lambda kept: {**kept, "ids": (1, 2)}, id="ids"),
        pytest.param(
            lambda kept: {**kept, "ids": (*kept["ids"][:1], b"\xff\xff", *kept["ids"][2:])},
            id="p4info-bytes",
        ),
        pytest.param(lambda kept: {**kept, "options": (100, False, False)}, id="options"),
        pytest.param(lambda kept: {**kept, "source": "def (:\n"}, id="source-not-python"),
        pytest.param(lambda kept: {**kept, "declarations": None}, id="declarations"),
        pytest.param(lambda kept: {**kept, "replay": (("no_such_call", ()),)}, id="replay"),
        pytest.param(
            lambda kept: {
                **kept,
                "origins": {name: ("table", (None, None), ()) for name in kept["origins"]},
            },
            id="origin",
        ),
    ],
)
def test_a_damaged_template_is_generated_again_and_kept_again(
    source: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, change: Any
) -> None:
    reference = behaviour(compiles(load_checked(source))[0])
    new_process(monkeypatch)
    replace_kept(load_checked(source), change)
    new_process(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="p4emu.backend"):
        switch, how = compiles(load_checked(source))
    assert how == (1, 0, 0)
    assert "generated again" in caplog.text
    assert behaviour(switch) == reference
    new_process(monkeypatch)
    switch, how = compiles(load_checked(source))  # the entry holds a good template again
    assert how == (0, 0, 1)
    assert behaviour(switch) == reference


def test_a_template_of_other_code_is_not_used(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiles(load_checked(source))
    new_process(monkeypatch)
    checked = load_checked(source)
    monkeypatch.setattr(program, "generator_digest", lambda: "another generator")
    _, how = compiles(checked)
    assert how == (1, 0, 0)


def test_a_digest_that_follows_the_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    digest = program.generator_digest()
    assert digest == program.generator_digest()
    native_now = program.native.runtime_native()
    monkeypatch.setattr(program.native, "runtime_native", lambda: not native_now)
    other_runtime = program.generator_digest()
    monkeypatch.setattr(program, "TEMPLATE_FORMAT", "p4emu-template-other")
    other_format = program.generator_digest()
    assert len({digest, other_runtime, other_format}) == 3


def test_a_program_not_from_the_cache_keeps_nothing(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = load_program(source)
    _, how = compiles(checked)
    assert how == (1, 0, 0)
    # no checked-program entry (a compiled runtime's generated module may be cached)
    assert not (source.parent / "cache" / cache.SUBDIR).exists()
    new_process(monkeypatch)
    _, how = compiles(load_program(source))
    assert how == (1, 0, 0)


def test_a_cache_that_cannot_be_rewritten_still_compiles(
    source: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = load_checked(source)
    monkeypatch.setattr(cache, "write_entry", lambda *args, **kwargs: False)
    _, how = compiles(checked)
    assert how == (1, 0, 0)
    new_process(monkeypatch)
    _, how = compiles(load_checked(source))
    assert how == (1, 0, 0)


def test_a_kept_template_imports_no_code_generator(source: Path) -> None:
    code = """
        import sys
        from p4emu.backend.program import compile_stats
        from p4emu.frontend import load_checked
        from p4emu.switch import Switch
        Switch(load_checked(sys.argv[1]))
        stats = compile_stats()
        print(stats.generated, stats.loaded)
        print(" ".join(sorted(m for m in sys.modules if m.startswith("p4emu."))))
    """
    runs = [
        subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), str(source)],
            env=dict(os.environ),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        for _ in range(2)
    ]
    assert runs[0][0] == "1 0" and runs[1][0] == "0 1"
    generator = {
        "p4emu.backend.body",
        "p4emu.backend.parsers",
        "p4emu.backend.v1model_externs",
        "p4emu.backend.tables_codegen",
        "p4emu.backend.scope",
        "p4emu.backend.dead_stores",
        "p4emu.p4info.extract",
        "p4emu.p4info.builder",
    }
    assert generator <= set(runs[0][1].split())
    assert not generator & set(runs[1][1].split())
