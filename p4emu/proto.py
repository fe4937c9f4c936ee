"""The P4Runtime protobuf message modules, without finsy's gRPC client stack.

The project's P4Runtime, P4Info and status messages are the generated modules that finsy
ships (``finsy.proto``: PyPI's ``p4runtime`` holds old protoc output that protobuf >= 4
refuses, pyproject.toml). Importing any of them the usual way first runs
``finsy/__init__.py`` and ``finsy/proto/__init__.py``, which import finsy's whole
controller, ``grpc`` and ``asyncio``: about 50 ms of CPU, a quarter of the virtual
fabric's start-up, which p4emu's entity layer, the P4Info builder, the controller's
codec and the virtual fabric never use.

So this module enters the two packages into ``sys.modules`` *unexecuted* (their module
objects made from their own specs, ``__path__`` and all) and imports only the message
modules below them. A deferred package runs its own ``__init__`` the first time anyone
asks it for a name it does not have yet (``import finsy; finsy.Controller``, ``from
finsy import Switch``, ``from finsy.proto import p4r_grpc``, ``finsy.__version__``):
the same module objects and classes, their package code run later, and only when used.
If ``finsy`` was imported before this module, nothing is deferred.

Message modules: ``p4i`` (p4.config.v1.p4info_pb2), ``p4t`` (p4types_pb2), ``p4d``
(p4.v1.p4data_pb2), ``p4r`` (p4.v1.p4runtime_pb2), ``rpc_code`` and ``rpc_status``
(google.rpc): the very modules ``finsy.proto`` names so. The gRPC stubs and gNMI stay
``finsy.proto``'s (whoever needs them needs ``grpc`` anyway).
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType

__all__ = ["DEFERRED_PACKAGES", "p4d", "p4i", "p4r", "p4t", "rpc_code", "rpc_status"]

# The packages whose own code runs only when a name of theirs is first asked for.
DEFERRED_PACKAGES = ("finsy", "finsy.proto")

_lock = threading.RLock()
_running: set[str] = set()  # deferred packages whose code is running now


class _DeferredPackage(ModuleType):
    """A package whose ``__init__`` has not run: the first missing name runs it."""

    def __getattr__(self, name: str) -> object:
        run_deferred(self)
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None


def run_deferred(module: ModuleType) -> None:
    """Run a deferred package's own code now (nothing if it has run or was never deferred).

    While it runs, the thread running it sees a partly initialised package (a name not
    defined yet is an ``AttributeError``, as in any import) and every other thread asking
    it for a missing name waits until it has run."""
    with _lock:
        name = module.__name__
        if type(module) is not _DeferredPackage or name in _running:
            return
        _running.add(name)
        try:
            spec = module.__spec__
            assert spec is not None and spec.loader is not None
            spec.loader.exec_module(module)
        finally:
            _running.discard(name)
            module.__class__ = ModuleType


def _defer(name: str) -> None:
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        raise ImportError(f"{name} is not an installed package", name=name)
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _DeferredPackage
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


with _lock:
    for _name in DEFERRED_PACKAGES:
        _defer(_name)

from finsy.proto.google.rpc import code_pb2 as rpc_code  # noqa: E402
from finsy.proto.google.rpc import status_pb2 as rpc_status  # noqa: E402
from finsy.proto.p4.config.v1 import p4info_pb2 as p4i  # noqa: E402
from finsy.proto.p4.config.v1 import p4types_pb2 as p4t  # noqa: E402
from finsy.proto.p4.v1 import p4data_pb2 as p4d  # noqa: E402
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r  # noqa: E402
