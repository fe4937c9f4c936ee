"""Run a p4c STF test against p4emu, the way p4c's BMv2 runner runs it on simple_switch.

Semantics (p4c ``backends/bmv2/bmv2stf.py`` and ``tools/testutils.py``):

- Commands run in file order. Table entries, default actions, multicast groups, clone
  sessions, counters, registers and meters are written **through the P4Runtime layer**
  (:class:`p4emu.p4rt.P4RuntimeState`), the path the gRPC server uses; a refused write
  stops the test with the P4Runtime error and the STF line.
- ``add TABLE [PRIO] KEY:VALUE... ACTION(ARG:VALUE, ...) [= HANDLE]``: table and action
  names may be fully qualified or a suffix (``t`` for ``MyIngress.t``, as bmv2stf);
  keys are matched by field name the same way (``hdr.h.f``, ``h.f``, ``f``). A ternary
  value's mask comes from its written digits (``0x0a00****``: the ``*`` digits and any
  digit not written are don't care) or an explicit ``VALUE&&&MASK``; an lpm value is
  ``VALUE/LEN`` (or the written digits); keys not given are don't care. STF priorities
  keep their order (a larger STF priority wins, as bmv2stf's ``10000 - prio``); P4Runtime
  priority = STF priority + 1, since P4Runtime has no priority 0. Tables with
  ternary/range/optional keys need a priority, as in BMv2.
- ``packet PORT HEX`` injects a frame; ``expect PORT HEX [$]`` expects the next frame
  on PORT (per port, in order; ``*`` nibbles match anything; without ``$`` the
  received frame may be longer); ``expect PORT`` alone accepts any number of frames on
  PORT. At the end every port must have received exactly its expected frames: a
  missing or an extra frame fails the test. As in bmv2stf, which gives BMv2 an interface
  only for the ports the STF names (``packet`` or ``expect``), frames sent to any other
  port are not checked (a note says how many); ``--strict-ports`` fails the test on them.
- ``mirroring_add``, ``mc_mgrp_create`` / ``mc_node_create`` / ``mc_node_associate``
  follow ``simple_switch_CLI``: node handles count from 0 and a group's replicas are its
  nodes' (port, rid) pairs. ``check_counter`` and the p4emu extension
  ``check_register`` compare values (bmv2stf ignores ``check_counter``; p4emu checks it);
  ``counter_read``/``register_read``/``meter_get_rates``/``mirroring_get`` print.
- ``wait`` lets every queued packet leave; the switch runs on a virtual clock, so
  meters and timestamps are deterministic. ``no_packet`` changes nothing (every port's
  frame count is checked anyway).
- A comment line ``# p4emu-options: --priority-queues 4 --seed 7`` sets switch options
  (``simple_switch`` command-line options have no STF syntax).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from p4emu.exceptions import P4EmuError
from p4emu.p4rt import P4RuntimeError, P4RuntimeState
from p4emu.p4rt.codec import encode_unsigned
from p4emu.p4rt_client.exceptions import code_name
from p4emu.proto import p4d, p4r, rpc_code
from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.exceptions import PreError, RuntimeP4Error
from p4emu.runtime.externs import meter_config_from_bmv2_rates
from p4emu.runtime.objects import ProgramObjects, TableInfo
from p4emu.stf.diff import first_difference, hexdump, packet_diff
from p4emu.stf.exceptions import StfCommandError, StfError
from p4emu.stf.parser import (
    StfAdd,
    StfArg,
    StfCheckCounter,
    StfCheckRegister,
    StfCommand,
    StfCounterRead,
    StfCounterWrite,
    StfExpect,
    StfMcGroupCreate,
    StfMcNodeAssociate,
    StfMcNodeCreate,
    StfMcNodeUpdate,
    StfMeterGetRates,
    StfMeterSetRates,
    StfMirroringAdd,
    StfMirroringAddMc,
    StfMirroringDelete,
    StfMirroringGet,
    StfNoPacket,
    StfNumber,
    StfPacket,
    StfRegisterRead,
    StfRegisterReset,
    StfRegisterWrite,
    StfRemoveAll,
    StfSetDefault,
    StfWait,
    parse_stf,
)

OPTIONS_MARKER = "p4emu-options:"

_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


# --------------------------------------------------------------------------- options


@dataclass
class StfOptions:
    """Switch options of an STF run (``simple_switch`` command-line equivalents)."""

    priority_queues: int = 1
    seed: int = 0
    cpu_port: int | None = None
    drop_port: int = 511
    strict_ports: bool = False
    include_dirs: tuple[str, ...] = ()
    defines: dict[str, str] = field(default_factory=dict)
    #: options given on the command line; ``# p4emu-options:`` comments do not override them
    explicit: set[str] = field(default_factory=set)


def add_switch_arguments(parser: argparse.ArgumentParser) -> None:
    """Options accepted on the command line and in ``# p4emu-options:`` comments."""
    parser.add_argument("--priority-queues", type=int, metavar="N", help="queues per port")
    parser.add_argument("--seed", type=int, metavar="N", help="seed of random()")
    parser.add_argument("--cpu-port", type=int, metavar="PORT", help="the CPU port")
    parser.add_argument("--drop-port", type=int, metavar="PORT", help="the drop port (511)")
    parser.add_argument(
        "--strict-ports",
        action="store_true",
        default=None,
        help="fail on frames sent to ports the STF never names (bmv2stf ignores them)",
    )


_SWITCH_OPTIONS = ("priority_queues", "seed", "cpu_port", "drop_port", "strict_ports")


def apply_switch_arguments(
    options: StfOptions, args: argparse.Namespace, *, explicit: bool = True
) -> None:
    """Copy the switch options given in ``args``; ``explicit`` ones win over the file's."""
    for name in _SWITCH_OPTIONS:
        value = getattr(args, name, None)
        if value is None or (not explicit and name in options.explicit):
            continue
        setattr(options, name, value)
        if explicit:
            options.explicit.add(name)


def options_from_text(text: str, file: str, options: StfOptions) -> None:
    """Apply the ``# p4emu-options: ...`` comment lines of an STF file to ``options``."""
    parser = argparse.ArgumentParser(prog="p4emu-options", add_help=False, exit_on_error=False)
    add_switch_arguments(parser)
    for lineno, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped.startswith("#"):
            continue
        body = stripped.lstrip("#").strip()
        if not body.startswith(OPTIONS_MARKER):
            continue
        words = shlex.split(body[len(OPTIONS_MARKER) :])
        try:
            parsed, unknown = parser.parse_known_args(words)
        except argparse.ArgumentError as error:
            raise StfCommandError(file, lineno, f"bad p4emu option: {error}") from None
        if unknown:
            raise StfCommandError(file, lineno, f"unknown p4emu option(s): {' '.join(unknown)}")
        apply_switch_arguments(options, parsed, explicit=False)


# --------------------------------------------------------------------------- results


@dataclass
class ReceivedPacket:
    """A packet the switch output: its egress port and bytes."""

    port: int
    data: bytes


@dataclass
class StfResult:
    """The outcome of one STF run."""

    file: str
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    packets_sent: int = 0
    packets_received: int = 0
    expects_checked: int = 0

    @property
    def passed(self) -> bool:
        return not self.failures

    def report(self) -> str:
        lines = [*self.notes]
        if self.passed:
            lines.append(
                f"PASS {self.file}: {self.packets_sent} packet(s) sent, "
                f"{self.packets_received} received, {self.expects_checked} expectation(s) met"
            )
        else:
            lines.append(f"FAIL {self.file}: {len(self.failures)} problem(s)")
            for failure in self.failures:
                lines.append(failure)
        return "\n".join(lines)


# --------------------------------------------------------------------------- the target


class StfTarget:
    """A :class:`p4emu.switch.Switch` on a virtual clock plus its P4Runtime layer."""

    def __init__(self, program: str | Path, options: StfOptions) -> None:
        from p4emu.switch import Switch

        self.switch = Switch(
            program,
            clock=VirtualClock(),
            priority_queues=options.priority_queues,
            seed=options.seed,
            cpu_port=options.cpu_port,
            drop_port=options.drop_port,
            include_dirs=tuple(options.include_dirs),
            defines=dict(options.defines) or None,
        )
        self.objects: ProgramObjects = self.switch.objects
        self.state = P4RuntimeState(self.objects)

    def send(self, port: int, data: bytes) -> None:
        self.switch.inject(port, data)

    def settle(self) -> None:
        self.switch.run_until_idle()

    def collect(self) -> list[tuple[int, bytes]]:
        return self.switch.collect()


# --------------------------------------------------------------------------- the runner


@dataclass
class _Handle:
    """An entry named with ``add ... = NAME`` (for ``check_counter``)."""

    info: TableInfo
    key: p4r.TableEntry


class StfRunner:
    """Executes parsed STF commands against a target and checks the expectations."""

    def __init__(
        self, target: StfTarget, file: str = "<stf>", *, strict_ports: bool = False
    ) -> None:
        self.target = target
        self.objects = target.objects
        self.state = target.state
        self.file = file
        self.strict_ports = strict_ports
        self.result = StfResult(file)
        self._expects: dict[int, list[StfExpect]] = {}
        self._any_ports: set[int] = set()
        self._named_ports: set[int] = set()
        self._received: list[tuple[int, bytes]] = []
        self._handles: dict[str, _Handle] = {}
        #: per table, the keys of the entries ``add`` wrote, in order (BMv2 entry handles)
        self._added: dict[str, list[p4r.TableEntry]] = {}
        self._nodes: dict[int, tuple[int, tuple[int, ...]]] = {}
        self._group_nodes: dict[int, list[int]] = {}
        self._line = 0

    @property
    def received(self) -> list[tuple[int, bytes]]:
        """Every frame the target sent so far, (port, bytes) in order (all ports)."""
        return list(self._received)

    # --- driver -------------------------------------------------------------------------

    def run(self, commands: Sequence[StfCommand]) -> StfResult:
        for command in commands:
            self._line = command.line
            self._execute(command)
        self._line = 0
        self.target.settle()
        self._received.extend(self.target.collect())
        self._compare()
        return self.result

    def _execute(self, command: StfCommand) -> None:
        handler = self._HANDLERS.get(type(command))
        if handler is None:
            raise self._error(f"the command {type(command).__name__} is not supported")
        handler(self, command)

    def _error(self, message: str) -> StfCommandError:
        return StfCommandError(self.file, self._line, message)

    def _note(self, message: str) -> None:
        where = f"{self.file}:{self._line}" if self._line else self.file
        self.result.notes.append(f"{where}: {message}")

    # --- P4Runtime plumbing --------------------------------------------------------------

    def _write(self, update_type: int, what: str, **entity) -> None:
        update = p4r.Update(type=update_type, entity=p4r.Entity(**entity))
        [error] = self.state.write([update])
        if error.canonical_code != rpc_code.OK:
            raise self._error(f"{what} refused: {code_name(error.canonical_code)}: {error.message}")

    def _write_pre(self, update_type: int, what: str, **entry) -> None:
        """:meth:`_write` of a PacketReplicationEngineEntry (a clone session or a group)."""
        self._write(
            update_type,
            what,
            packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(**entry),
        )

    def _read(self, what: str, **entity) -> list[p4r.Entity]:
        try:
            return list(self.state.read(p4r.Entity(**entity)))
        except P4RuntimeError as error:
            raise self._error(f"{what}: {error}") from None

    # --- name resolution (bmv2stf rules) -------------------------------------------------

    def _resolve(self, name: str, candidates: Iterable[str], what: str) -> str:
        names = list(candidates)
        if name in names:
            return name
        for suffix in ("." + name, name):
            found = [n for n in names if n.endswith(suffix)]
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                raise self._error(f"{what} name {name!r} is ambiguous: {', '.join(found)}")
        known = ", ".join(names) if names else "none"
        raise self._error(f"no {what} {name!r} (known: {known})")

    def _table(self, name: str) -> TableInfo:
        return self.objects.table_info[self._resolve(name, self.objects.table_info, "table")]

    def _action_of(self, info: TableInfo, name: str) -> int:
        if info.is_indirect:
            raise self._error(
                f"table {info.name} is implemented by an action profile; STF cannot program it"
            )
        names = {self.objects.action_by_id(a).name: a for a in info.action_ids}
        return names[self._resolve(name, names, f"action of table {info.name}")]

    def _key_index(self, info: TableInfo, name: str) -> int:
        names = [k.name for k in info.key]
        name = _stack_index_name(name)
        for candidate in (name, name + "$", name + ".$valid$"):
            if candidate in names:
                return names.index(candidate)
        if name.endswith(".valid") and name[:-5] + "$valid$" in names:
            return names.index(name[:-5] + "$valid$")
        for index, key_name in enumerate(names):
            if key_name.endswith("." + name) or key_name.endswith("." + name + "$"):
                return index
            if name == "valid" and key_name.endswith(".$valid$"):
                return index
        known = ", ".join(names) or "none"
        raise self._error(f"table {info.name} has no key field {name!r} (keys: {known})")

    # --- table commands ----------------------------------------------------------------

    def _action_proto(self, action_id: int, args: Sequence[StfArg]) -> p4r.Action:
        action = self.objects.action_by_id(action_id)
        values: dict[str, int] = {}
        for arg in args:
            try:
                param = action.param(arg.name)
            except KeyError:
                known = ", ".join(p.name for p in action.params) or "none"
                raise self._error(
                    f"action {action.name} has no parameter {arg.name!r} (parameters: {known})"
                ) from None
            if arg.value.mask is not None:
                raise self._error(f"parameter {arg.name}: wildcards are not allowed")
            values[param.name] = arg.value.value
        missing = [p.name for p in action.params if p.name not in values]
        if missing:
            raise self._error(f"action {action.name}: missing argument(s) {', '.join(missing)}")
        out = p4r.Action(action_id=action_id)
        for param in action.params:
            out.params.add(param_id=param.id, value=encode_unsigned(values[param.name]))
        return out

    def _key_proto(self, info: TableInfo, cmd: StfAdd) -> tuple[list[p4r.FieldMatch], int]:
        matches: dict[int, p4r.FieldMatch] = {}
        for match in cmd.matches:
            index = self._key_index(info, match.field)
            key = info.key[index]
            if key.id in matches:
                raise self._error(f"key field {key.name} given twice")
            fm = _field_match(key.id, key.width, key.match_kind, match.value, self._error)
            if fm is not None:
                matches[key.id] = fm
        ordered = [matches[k.id] for k in info.key if k.id in matches]
        priority = 0
        if info.table.requires_priority:
            if cmd.priority is None:
                raise self._error(
                    f"table {info.name} has ternary/range/optional keys: give a priority "
                    f"(add {cmd.table} PRIORITY key:value ... action(...))"
                )
            priority = cmd.priority + 1
        return ordered, priority

    def _add(self, cmd: StfAdd) -> None:
        info = self._table(cmd.table)
        matches, priority = self._key_proto(info, cmd)
        action = self._action_proto(self._action_of(info, cmd.action.name), cmd.action.args)
        te = p4r.TableEntry(table_id=info.id, match=matches, priority=priority)
        te.action.action.CopyFrom(action)
        self._write(p4r.Update.INSERT, f"entry of table {info.name}", table_entry=te)
        key = p4r.TableEntry(table_id=info.id, match=matches, priority=priority)
        self._added.setdefault(info.name, []).append(key)
        if cmd.handle is not None:
            self._handles[cmd.handle] = _Handle(info, key)

    def _set_default(self, cmd: StfSetDefault) -> None:
        info = self._table(cmd.table)
        action = self._action_proto(self._action_of(info, cmd.action.name), cmd.action.args)
        te = p4r.TableEntry(table_id=info.id, is_default_action=True)
        te.action.action.CopyFrom(action)
        self._write(p4r.Update.MODIFY, f"default action of table {info.name}", table_entry=te)

    def _remove_all(self, cmd: StfRemoveAll) -> None:
        for entity in self._read("reading the table entries", table_entry=p4r.TableEntry()):
            te = entity.table_entry
            if te.is_const:
                continue
            key = p4r.TableEntry(table_id=te.table_id, match=te.match, priority=te.priority)
            self._write(p4r.Update.DELETE, "remove all", table_entry=key)
        self._added.clear()

    # --- packets -------------------------------------------------------------------------

    def _packet(self, cmd: StfPacket) -> None:
        self._named_ports.add(cmd.port)
        self.result.packets_sent += 1
        try:
            self.target.send(cmd.port, cmd.data)
        except P4EmuError as error:
            raise self._error(f"packet on port {cmd.port}: {error}") from None
        self._received.extend(self.target.collect())

    def _expect(self, cmd: StfExpect) -> None:
        self._named_ports.add(cmd.port)
        if cmd.pattern is None:
            self._any_ports.add(cmd.port)
        else:
            self._expects.setdefault(cmd.port, []).append(cmd)

    def _wait(self, cmd: StfWait) -> None:
        self.target.settle()
        self._received.extend(self.target.collect())

    def _no_packet(self, cmd: StfNoPacket) -> None:
        """Nothing to do: every port's frames are checked at the end."""

    # --- PRE -----------------------------------------------------------------------------

    def _mirroring_add(self, cmd: StfMirroringAdd) -> None:
        session = p4r.CloneSessionEntry(session_id=cmd.session)
        session.replicas.add(port=encode_unsigned(cmd.port), instance=0)
        exists = self._clone_session_exists(cmd.session)
        self._write_pre(
            p4r.Update.MODIFY if exists else p4r.Update.INSERT,
            f"mirroring session {cmd.session}",
            clone_session_entry=session,
        )

    def _mirroring_add_mc(self, cmd: StfMirroringAddMc) -> None:
        # P4Runtime has no "clone to a multicast group"; use the PRE's BMv2 model
        try:
            self.objects.pre.mirroring_add_mc(cmd.session, cmd.group)
        except PreError as error:
            raise self._error(f"mirroring_add_mc: {error}") from None

    def _mirroring_delete(self, cmd: StfMirroringDelete) -> None:
        session = p4r.CloneSessionEntry(session_id=cmd.session)
        self._write_pre(
            p4r.Update.DELETE, f"mirroring session {cmd.session}", clone_session_entry=session
        )

    def _mirroring_get(self, cmd: StfMirroringGet) -> None:
        entries = self._read(
            f"mirroring session {cmd.session}",
            packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                clone_session_entry=p4r.CloneSessionEntry(session_id=cmd.session)
            ),
        )
        for entity in entries:
            session = entity.packet_replication_engine_entry.clone_session_entry
            ports = [int.from_bytes(r.port, "big") or r.egress_port for r in session.replicas]
            self._note(f"mirroring session {cmd.session}: ports {ports}")

    def _clone_session_exists(self, session_id: int) -> bool:
        try:
            self.objects.pre.get_clone_session(session_id)
        except PreError:
            return False
        return True

    def _mc_group_create(self, cmd: StfMcGroupCreate) -> None:
        group = p4r.MulticastGroupEntry(multicast_group_id=cmd.group)
        self._write_pre(
            p4r.Update.INSERT, f"multicast group {cmd.group}", multicast_group_entry=group
        )
        self._group_nodes[cmd.group] = []

    def _mc_node_create(self, cmd: StfMcNodeCreate) -> None:
        handle = len(self._nodes)
        self._nodes[handle] = (cmd.rid, tuple(sorted(set(cmd.ports))))
        self._note(f"mc_node_create: node handle {handle} (rid {cmd.rid}, ports {list(cmd.ports)})")

    def _mc_node_update(self, cmd: StfMcNodeUpdate) -> None:
        if cmd.node not in self._nodes:
            raise self._error(f"mc_node_update: no node with handle {cmd.node}")
        rid, _ = self._nodes[cmd.node]
        self._nodes[cmd.node] = (rid, tuple(sorted(set(cmd.ports))))
        for group, nodes in self._group_nodes.items():
            if cmd.node in nodes:
                self._push_group(group)

    def _mc_node_associate(self, cmd: StfMcNodeAssociate) -> None:
        if cmd.node not in self._nodes:
            raise self._error(f"mc_node_associate: no node with handle {cmd.node}")
        if cmd.group not in self._group_nodes:
            raise self._error(f"mc_node_associate: multicast group {cmd.group} was not created")
        if cmd.node in self._group_nodes[cmd.group]:
            raise self._error(f"mc_node_associate: node {cmd.node} is already in group {cmd.group}")
        self._group_nodes[cmd.group].append(cmd.node)
        self._push_group(cmd.group)

    def _push_group(self, group_id: int) -> None:
        group = p4r.MulticastGroupEntry(multicast_group_id=group_id)
        for handle in self._group_nodes[group_id]:
            rid, ports = self._nodes[handle]
            for port in ports:
                group.replicas.add(port=encode_unsigned(port), instance=rid)
        self._write_pre(
            p4r.Update.MODIFY, f"multicast group {group_id}", multicast_group_entry=group
        )

    # --- counters, registers, meters -----------------------------------------------------

    def _counter_id(self, name: str) -> tuple[str, int]:
        resolved = self._resolve(name, self.objects.counters, "counter")
        return resolved, self._id_of(resolved, 0x12)

    def _id_of(self, name: str, prefix: int) -> int:
        for object_id, object_name in self.objects.names_by_id.items():
            if object_name == name and object_id >> 24 == prefix:
                return object_id
        raise self._error(f"{name} has no P4Info id")

    def _counter_values(self, name: str, index: int | str) -> tuple[str, int, int]:
        if isinstance(index, str):
            handle = self._handles.get(index)
            if handle is None:
                raise self._error(f"no entry was added with handle {index!r} (add ... = {index})")
            info = handle.info
            counter = info.direct_counter
            if counter is None or not (counter == name or counter.endswith("." + name)):
                raise self._error(
                    f"{name!r} is not the direct counter of table {info.name} "
                    f"(it has {counter or 'none'})"
                )
            [entity] = self._read(
                f"direct counter {counter}",
                direct_counter_entry=p4r.DirectCounterEntry(table_entry=handle.key),
            )
            data = entity.direct_counter_entry.data
            return f"{counter}({index})", data.packet_count, data.byte_count
        resolved, counter_id = self._counter_id(name)
        entry = p4r.CounterEntry(counter_id=counter_id)
        entry.index.index = index
        [entity] = self._read(f"counter {resolved}", counter_entry=entry)
        data = entity.counter_entry.data
        return f"{resolved}[{index}]", data.packet_count, data.byte_count

    def _check_counter(self, cmd: StfCheckCounter) -> None:
        label, packets, byte_count = self._counter_values(cmd.counter, cmd.index)
        kind = cmd.count_type or "packets"
        actual = packets if kind == "packets" else byte_count
        if not _COMPARE[cmd.op](actual, cmd.value):
            self.result.failures.append(
                f"{self.file}:{cmd.line}: check_counter {label}: {kind} is {actual}, "
                f"expected {cmd.op} {cmd.value} (packets {packets}, bytes {byte_count})"
            )

    def _counter_read(self, cmd: StfCounterRead) -> None:
        label, packets, byte_count = self._counter_values(cmd.counter, cmd.index)
        self._note(f"counter_read {label}: packets {packets}, bytes {byte_count}")

    def _counter_write(self, cmd: StfCounterWrite) -> None:
        resolved, counter_id = self._counter_id(cmd.counter)
        entry = p4r.CounterEntry(counter_id=counter_id)
        entry.index.index = cmd.index
        entry.data.packet_count = cmd.packets
        entry.data.byte_count = cmd.bytes
        self._write(p4r.Update.MODIFY, f"counter {resolved}", counter_entry=entry)

    def _register_entry(self, name: str, index: int | None) -> tuple[str, p4r.RegisterEntry]:
        resolved = self._resolve(name, self.objects.registers, "register")
        entry = p4r.RegisterEntry(register_id=self._id_of(resolved, 0x16))
        if index is not None:
            entry.index.index = index
        return resolved, entry

    def _register_value(self, name: str, index: int) -> tuple[str, int]:
        resolved, entry = self._register_entry(name, index)
        [entity] = self._read(f"register {resolved}", register_entry=entry)
        value = int.from_bytes(entity.register_entry.data.bitstring, "big")
        return resolved, value

    def _register_write(self, cmd: StfRegisterWrite) -> None:
        resolved, entry = self._register_entry(cmd.register, cmd.index)
        entry.data.CopyFrom(p4d.P4Data(bitstring=encode_unsigned(cmd.value)))
        self._write(p4r.Update.MODIFY, f"register {resolved}[{cmd.index}]", register_entry=entry)

    def _register_reset(self, cmd: StfRegisterReset) -> None:
        resolved, entry = self._register_entry(cmd.register, None)
        entry.data.CopyFrom(p4d.P4Data(bitstring=b"\x00"))
        self._write(p4r.Update.MODIFY, f"register {resolved}", register_entry=entry)

    def _register_read(self, cmd: StfRegisterRead) -> None:
        resolved, value = self._register_value(cmd.register, cmd.index)
        self._note(f"register_read {resolved}[{cmd.index}] = {value}")

    def _check_register(self, cmd: StfCheckRegister) -> None:
        resolved, value = self._register_value(cmd.register, cmd.index)
        if not _COMPARE[cmd.op](value, cmd.value):
            self.result.failures.append(
                f"{self.file}:{cmd.line}: check_register {resolved}[{cmd.index}] is {value}, "
                f"expected {cmd.op} {cmd.value}"
            )

    def _meter(self, name: str) -> tuple[str, bool]:
        """The meter ``name`` resolves to, and whether it is a direct meter."""
        names = [*self.objects.meters, *self.objects.direct_meters]
        resolved = self._resolve(name, names, "meter")
        return resolved, resolved in self.objects.direct_meters

    def _meter_entity(self, cmd: StfMeterSetRates | StfMeterGetRates) -> tuple[str, dict]:
        """(label, P4Runtime entity fields) of the meter cell or direct-meter entry."""
        resolved, direct = self._meter(cmd.meter)
        if not direct:
            if isinstance(cmd.index, str):
                raise self._error(
                    f"meter {resolved} is a meter array: give an index, not the handle "
                    f"{cmd.index!r}"
                )
            entry = p4r.MeterEntry(meter_id=self._id_of(resolved, 0x14))
            if cmd.index is None:
                return f"meter {resolved}", {"meter_entry": entry}
            entry.index.index = cmd.index
            return f"meter {resolved}[{cmd.index}]", {"meter_entry": entry}
        table = self.objects.direct_meters[resolved].table
        if cmd.index is None:
            raise self._error(
                f"meter_array_set_rates: {resolved} is the direct meter of table {table}: "
                "use meter_set_rates with an entry"
            )
        if isinstance(cmd.index, str):
            handle = self._handles.get(cmd.index)
            if handle is None:
                raise self._error(f"no entry was added with handle {cmd.index!r} (add ... = NAME)")
            if handle.info.name != table:
                raise self._error(
                    f"handle {cmd.index!r} is an entry of table {handle.info.name}, but "
                    f"{resolved} is the direct meter of table {table}"
                )
            key = handle.key
        else:
            added = self._added.get(table, [])
            if not 0 <= cmd.index < len(added):
                raise self._error(
                    f"{resolved} is the direct meter of table {table}: entry handle "
                    f"{cmd.index} does not exist ({len(added)} entries added)"
                )
            key = added[cmd.index]
        entry = p4r.DirectMeterEntry(table_entry=key)
        return f"direct meter {resolved}({cmd.index})", {"direct_meter_entry": entry}

    def _meter_set_rates(self, cmd: StfMeterSetRates) -> None:
        label, fields = self._meter_entity(cmd)
        try:
            config = meter_config_from_bmv2_rates(
                [(rate.rate, rate.burst) for rate in cmd.rates], label
            )
        except RuntimeP4Error as error:
            raise self._error(str(error)) from None
        [entry] = fields.values()
        entry.config.CopyFrom(
            p4r.MeterConfig(
                cir=config.cir, cburst=config.cburst, pir=config.pir, pburst=config.pburst
            )
        )
        self._write(p4r.Update.MODIFY, label, **fields)

    def _meter_get_rates(self, cmd: StfMeterGetRates) -> None:
        label, fields = self._meter_entity(cmd)
        [entity] = self._read(label, **fields)
        [kind] = fields
        entry = getattr(entity, kind)
        if entry.HasField("config"):
            config = entry.config
            self._note(
                f"meter_get_rates {label}: "
                f"{config.cir / 1e6}:{config.cburst} {config.pir / 1e6}:{config.pburst}"
            )
        else:
            self._note(f"meter_get_rates {label}: not configured")

    # --- the final comparison ------------------------------------------------------------

    def _compare(self) -> None:
        received: dict[int, list[bytes]] = {}
        for port, data in self._received:
            received.setdefault(port, []).append(data)
        self.result.packets_received = len(self._received)
        ports = sorted(set(received) | set(self._expects) | self._any_ports)
        for port in ports:
            got = received.get(port, [])
            if port in self._any_ports:
                if port in self._expects:
                    self.result.failures.append(
                        f"port {port}: has both 'expect {port}' without data and expected "
                        "packets (bmv2stf refuses this too)"
                    )
                continue
            if port not in self._named_ports and not self.strict_ports:
                self._note(
                    f"{len(got)} frame(s) sent to port {port}, which the STF never names (ignored)"
                )
                continue
            self._compare_port(port, self._expects.get(port, []), got)

    def _compare_port(self, port: int, expected: list[StfExpect], got: list[bytes]) -> None:
        failures = self.result.failures
        for position, (expect, data) in enumerate(zip(expected, got)):
            assert expect.pattern is not None
            self.result.expects_checked += 1
            if expect.matches(data):
                continue
            why = first_difference(expect.pattern, expect.exact, data) or expect.mismatch(data)
            lines = [f"port {port}, packet #{position + 1} (expect at line {expect.line}): {why}"]
            lines.extend(packet_diff(expect.pattern, expect.exact, data))
            failures.append("\n".join(lines))
        if len(got) > len(expected):
            extra = got[len(expected) :]
            lines = [
                f"port {port}: {len(extra)} unexpected packet(s) "
                f"(expected {len(expected)}, received {len(got)})"
            ]
            for index, data in enumerate(extra[:8], start=len(expected) + 1):
                lines.append(f"    received packet #{index} ({len(data)} bytes):")
                lines.extend(hexdump(data, indent="      "))
            if len(extra) > 8:
                lines.append(f"    ... and {len(extra) - 8} more")
            failures.append("\n".join(lines))
        elif len(got) < len(expected):
            missing = expected[len(got) :]
            numbers = ", ".join(str(e.line) for e in missing)
            failures.append(
                f"port {port}: {len(missing)} expected packet(s) not received "
                f"(expected {len(expected)}, received {len(got)}; expect line(s) {numbers})"
            )

    _HANDLERS: dict[type, Callable[[StfRunner, object], None]] = {}


StfRunner._HANDLERS = {
    StfAdd: StfRunner._add,
    StfSetDefault: StfRunner._set_default,
    StfRemoveAll: StfRunner._remove_all,
    StfPacket: StfRunner._packet,
    StfExpect: StfRunner._expect,
    StfWait: StfRunner._wait,
    StfNoPacket: StfRunner._no_packet,
    StfCheckCounter: StfRunner._check_counter,
    StfCheckRegister: StfRunner._check_register,
    StfMirroringAdd: StfRunner._mirroring_add,
    StfMirroringAddMc: StfRunner._mirroring_add_mc,
    StfMirroringDelete: StfRunner._mirroring_delete,
    StfMirroringGet: StfRunner._mirroring_get,
    StfMcGroupCreate: StfRunner._mc_group_create,
    StfMcNodeCreate: StfRunner._mc_node_create,
    StfMcNodeUpdate: StfRunner._mc_node_update,
    StfMcNodeAssociate: StfRunner._mc_node_associate,
    StfCounterRead: StfRunner._counter_read,
    StfCounterWrite: StfRunner._counter_write,
    StfRegisterRead: StfRunner._register_read,
    StfRegisterWrite: StfRunner._register_write,
    StfRegisterReset: StfRunner._register_reset,
    StfMeterSetRates: StfRunner._meter_set_rates,
    StfMeterGetRates: StfRunner._meter_get_rates,
}  # type: ignore[assignment]


# --------------------------------------------------------------------------- helpers


def _stack_index_name(name: str) -> str:
    """bmv2stf writes stack elements as ``h$0.f``; P4Info names are ``h[0].f``."""
    head, sep, rest = name.partition("$")
    if sep and rest[:1].isdigit():
        digits = ""
        while rest[:1].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        return f"{head}[{digits}]{rest}"
    return name


def _field_match(
    field_id: int,
    width: int,
    kind: str,
    value: StfNumber,
    error: Callable[[str], StfError],
) -> p4r.FieldMatch | None:
    """The P4Runtime match for an STF key value; None for a don't-care value."""
    full = (1 << width) - 1
    fm = p4r.FieldMatch(field_id=field_id)
    if kind == "exact":
        if value.mask is not None or value.prefix_len is not None:
            raise error(
                f"exact key field (id {field_id}): wildcards, masks and prefixes are not allowed"
            )
        fm.exact.value = encode_unsigned(value.value)
        return fm
    if kind == "lpm":
        v, prefix = value.as_lpm(width)
        if prefix == 0:
            return None
        mask = full ^ ((1 << (width - prefix)) - 1)
        fm.lpm.value = encode_unsigned(v & mask)
        fm.lpm.prefix_len = prefix
        return fm
    if kind == "ternary":
        v, mask = value.as_ternary(width)
        if mask == 0:
            return None
        fm.ternary.value = encode_unsigned(v & mask)
        fm.ternary.mask = encode_unsigned(mask)
        return fm
    if kind == "optional":
        if value.mask is not None and value.mask & full == 0:
            return None
        if value.mask is not None and value.mask & full != full:
            raise error(f"optional key field (id {field_id}): only exact values or all '*'")
        fm.optional.value = encode_unsigned(value.value)
        return fm
    if kind == "range":
        if value.mask is not None or value.prefix_len is not None:
            raise error(f"range key field (id {field_id}): give a single value")
        fm.range.low = fm.range.high = encode_unsigned(value.value)
        return fm
    raise error(f"key field (id {field_id}) has match kind {kind!r}, which STF cannot write")


def run_stf(
    program: str | Path,
    stf: str | Path,
    options: StfOptions | None = None,
) -> StfResult:
    """Load ``program``, run the STF file ``stf`` against it, return the result."""
    options = options or StfOptions()
    stf_path = Path(stf)
    try:
        text = stf_path.read_text(encoding="utf-8")
    except OSError as error:
        raise StfError(f"{stf_path}: cannot read the STF file: {error.strerror}") from None
    except UnicodeDecodeError:
        raise StfError(f"{stf_path}: the STF file is not UTF-8 text") from None
    file = str(stf_path)
    commands = parse_stf(text, file)
    options_from_text(text, file, options)
    target = StfTarget(program, options)
    return StfRunner(target, file, strict_ports=options.strict_ports).run(commands)


__all__ = [
    "StfOptions",
    "StfResult",
    "StfRunner",
    "StfTarget",
    "add_switch_arguments",
    "apply_switch_arguments",
    "options_from_text",
    "run_stf",
]
