"""p4emu.proto: finsy's message modules without finsy's gRPC client stack.

Each case runs in a fresh interpreter: the test process has imported finsy already.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run_fresh(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_message_modules_come_without_grpc_asyncio_or_finsy_s_client() -> None:
    out = run_fresh(
        """
        import sys
        import p4emu.proto as proto
        msg = proto.p4r.WriteRequest(device_id=3)
        assert proto.p4r.WriteRequest.FromString(msg.SerializeToString()).device_id == 3
        assert proto.p4i.P4Info().pkg_info.name == ""
        assert proto.rpc_code.OK == 0 and proto.rpc_status.Status().code == 0
        assert proto.p4d.P4Data().WhichOneof("data") is None
        assert proto.p4t.P4TypeInfo().headers == {}
        heavy = ("grpc", "asyncio", "finsy.controller", "finsy.switch", "finsy.p4entity")
        print(sorted(m for m in heavy if m in sys.modules))
        print(type(sys.modules["finsy"]).__name__, type(sys.modules["finsy.proto"]).__name__)
        """
    )
    assert out.splitlines() == ["[]", "_DeferredPackage _DeferredPackage"]


def test_a_deferred_finsy_runs_its_own_code_when_first_asked_for_a_name() -> None:
    out = run_fresh(
        """
        import sys
        import p4emu.proto as proto
        from finsy import Switch, __version__
        import finsy
        import finsy.proto
        from finsy.proto import p4r, p4r_grpc, U128
        assert type(finsy) is type(sys) and type(finsy.proto) is type(sys)
        assert finsy.Switch is Switch and finsy.__version__ == __version__
        assert p4r is proto.p4r is finsy.proto.p4r
        assert finsy.proto.p4i is proto.p4i and finsy.proto.rpc_status is proto.rpc_status
        assert p4r_grpc.P4RuntimeStub is not None and U128 is not None
        print("grpc" in sys.modules, "asyncio" in sys.modules)
        """
    )
    assert out == "True True"


def test_a_submodule_of_a_deferred_package_imports_before_the_package_runs() -> None:
    out = run_fresh(
        """
        import sys
        import p4emu.proto
        import finsy.macaddr
        print(type(sys.modules["finsy"]).__name__, finsy.macaddr.MACAddress(1))
        print(finsy.Controller.__name__, type(sys.modules["finsy"]).__name__)
        """
    )
    assert out.splitlines() == ["_DeferredPackage 00:00:00:00:00:01", "Controller module"]


def test_a_name_the_package_does_not_have_is_an_attribute_error_after_it_runs() -> None:
    out = run_fresh(
        """
        import sys
        import p4emu.proto
        import finsy
        try:
            finsy.no_such_name
        except AttributeError as exc:
            print(exc)
        print(type(finsy).__name__, hasattr(finsy, "Controller"))
        """
    )
    assert out.splitlines() == ["module 'finsy' has no attribute 'no_such_name'", "module True"]


def test_finsy_imported_first_is_left_as_it_is() -> None:
    out = run_fresh(
        """
        import sys
        import finsy
        before = sys.modules["finsy"], sys.modules["finsy.proto"]
        import p4emu.proto as proto
        assert (sys.modules["finsy"], sys.modules["finsy.proto"]) == before
        assert proto.p4r is finsy.proto.p4r
        print(type(sys.modules["finsy"]).__name__)
        """
    )
    assert out == "module"


def test_running_a_deferred_package_is_once_across_threads() -> None:
    out = run_fresh(
        """
        import sys, threading
        import p4emu.proto as proto
        runs = []
        loader = sys.modules["finsy"].__spec__.loader
        real = loader.exec_module
        def counting(module):
            runs.append(module.__name__)
            real(module)
        loader.exec_module = counting
        barrier = threading.Barrier(4)
        seen = []
        def ask():
            barrier.wait()
            seen.append(sys.modules["finsy"].Controller.__name__)
        threads = [threading.Thread(target=ask) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        proto.run_deferred(sys.modules["finsy"])
        print(runs.count("finsy"), seen)
        """
    )
    assert out == "1 ['Controller', 'Controller', 'Controller', 'Controller']"
