"""The run directory: everything a running fabric leaves on disk, so that any later
``mrc-testbed`` command — or ``mrc-testbed down`` after the launcher crashed — can find and
stop it.

Layout of ``<root>/<name>/`` (``root`` from :func:`default_root`, never the current
directory)::

    state.json          RunState: mode, settings, every process (pid + start time), what is
                        down, Linux interfaces/namespaces created; rewritten atomically after
                        every change (a crash leaves the previous complete version)
    run-id              the run's random id, also set as MRC_TESTBED_RUN_ID in the
                        environment of every process the run starts
    lock                flock(2) target: one mutating command at a time
    topology.yaml       the topology as loaded by ``up`` (later commands use this copy)
    switches/<sw>.log   each switch's stdout/stderr
    nics/<nic>.json     each NIC's config (docs/nic-emu-process.md), <nic>.sock its control
                        socket, <nic>.events.jsonl its event log, <nic>.log its output

Teardown (:func:`teardown`) is idempotent and does not trust the launcher to have finished:
it stops every recorded process that is still the same process (pid *and* start time
match, so a recycled pid is never killed), plus every process whose environment carries the
run's id (started but not yet recorded when the launcher died), deletes the recorded
interfaces and namespaces that still exist, removes sockets, then the directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from testbed.exceptions import NotRunningError, ProcessStartError, RunDirError, TestbedError

RUN_ENV = "MRC_TESTBED_RUN_ID"
ROOT_ENV = "MRC_TESTBED_RUN_DIR"
STATE_FILE = "state.json"
RUN_ID_FILE = "run-id"
LOCK_FILE = "lock"
STATE_VERSION = 1
DEFAULT_STOP_GRACE_S = 3.0
FAILED_KEPT = 20  # failed runs kept under <root>/failed/ (oldest removed first)
FAILURE_FILE = "FAILURE"  # in a failed run's directory: what went wrong
PHASES = ("starting", "ready", "failed")

# Popen objects of the processes this Python process started, so that they are reaped
# (no zombies) when a test or the demo tears a fabric down from the same process.
_children: dict[int, subprocess.Popen[Any]] = {}
_exit_codes: dict[int, int] = {}


ROOT_RUN_DIR = Path("/run/mrc-testbed")  # root: the system's tmpfs for run state
STATE_SUBDIR = Path(".local/state/mrc-testbed")  # under $HOME, when nothing else applies
FAILED_DIR = "failed"  # <root>/failed/<name>-<time>/: what a failed up or demo left
RESULTS_DIR = "results"  # <root>/results/<name>/: plots and summaries of a run
RESERVED_NAMES = (FAILED_DIR, RESULTS_DIR)


def default_root() -> Path:
    """Where run directories live, whatever the current directory:
    ``$MRC_TESTBED_RUN_DIR``, else ``/run/mrc-testbed`` for root, else
    ``$XDG_RUNTIME_DIR/mrc-testbed`` (per-user tmpfs), else ``~/.local/state/mrc-testbed``.
    Never the current directory, so every command finds the same runs from anywhere."""
    explicit = os.environ.get(ROOT_ENV)
    if explicit:
        return Path(explicit).expanduser().absolute()
    if os.geteuid() == 0:
        return ROOT_RUN_DIR
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_absolute():
        return Path(runtime) / "mrc-testbed"
    return Path.home() / STATE_SUBDIR


def results_dir(name: str, root: Path | None = None) -> Path:
    """The results directory of run ``name`` (demo plots): ``<root>/results/<name>/``. It
    is not part of the run directory, so it outlives ``down``."""
    return _base(root) / RESULTS_DIR / name


def _base(root: Path | None) -> Path:
    return Path(root).absolute() if root is not None else default_root()


@dataclass
class ProcessRecord:
    """A process the run started. ``start_ticks`` is the kernel's start time of the pid
    (``/proc/<pid>/stat`` field 22): a pid with another start time is another process."""

    name: str  # "switch:p0-t0-0", "nic:nic0"
    kind: str  # "switch" | "nic"
    pid: int
    start_ticks: int
    argv: list[str]
    log: str
    netns_pid: int | None = None  # Mininet: runs in the network namespace of this pid

    @property
    def node(self) -> str:
        return self.name.partition(":")[2]


@dataclass
class RunState:
    """The run's ``state.json`` (module docstring): name, id, mode, target, topology file,
    creation time, launcher pid, phase, settings, every process and what is down or created."""

    name: str
    run_id: str
    mode: str  # "local" | "mininet"
    target: str  # "p4emu" | "bmv2"
    topology_file: str
    created: float
    launcher_pid: int
    phase: str = "starting"
    settings: dict[str, Any] = field(default_factory=dict)
    processes: dict[str, ProcessRecord] = field(default_factory=dict)
    links_down: list[list[str]] = field(default_factory=list)
    switches_down: list[str] = field(default_factory=list)
    ports_down: list[list[Any]] = field(default_factory=list)  # [nic, plane]
    interfaces: list[str] = field(default_factory=list)  # created in the root namespace
    namespaces: list[str] = field(default_factory=list)  # named (ip netns) namespaces
    version: int = STATE_VERSION

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str) -> RunState:
        try:
            if data.get("version") != STATE_VERSION:
                raise RunDirError(
                    f"{source}: state version {data.get('version')!r} is not {STATE_VERSION}"
                )
            processes = {
                key: ProcessRecord(**value) for key, value in dict(data["processes"]).items()
            }
            fields = {key: value for key, value in data.items() if key != "processes"}
            return cls(**fields, processes=processes)
        except (KeyError, TypeError, AttributeError) as exc:
            raise RunDirError(f"{source}: damaged state file ({exc})") from None

    def processes_of(self, kind: str) -> list[ProcessRecord]:
        return [record for record in self.processes.values() if record.kind == kind]


class RunDir:
    """One run's directory (it may not exist yet)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path).absolute()

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def state_path(self) -> Path:
        return self.path / STATE_FILE

    def exists(self) -> bool:
        return self.path.is_dir()

    def file(self, *parts: str) -> Path:
        return self.path.joinpath(*parts)

    def create(self) -> str:
        """Creates the directory (and its subdirectories); returns a new run id."""
        try:
            for sub in ("switches", "nics"):
                (self.path / sub).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunDirError(f"cannot create run directory {self.path}: {exc.strerror}") from None
        run_id = secrets.token_hex(8)
        (self.path / RUN_ID_FILE).write_text(run_id + "\n", encoding="utf-8")
        return run_id

    def discard_empty(self) -> None:
        """Removes the directory if it holds nothing but its lock file (a command that
        was refused before it made anything)."""
        with contextlib.suppress(OSError):
            if {entry.name for entry in self.path.iterdir()} <= {LOCK_FILE}:
                shutil.rmtree(self.path)

    def run_id(self) -> str | None:
        try:
            return (self.path / RUN_ID_FILE).read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def has_state(self) -> bool:
        return self.state_path.is_file()

    def load(self) -> RunState:
        try:
            text = self.state_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise NotRunningError(f"no fabric is running under {self.path}") from None
        except OSError as exc:
            raise RunDirError(f"cannot read {self.state_path}: {exc.strerror}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RunDirError(f"{self.state_path}: damaged state file ({exc})") from None
        if not isinstance(data, dict):
            raise RunDirError(f"{self.state_path}: damaged state file (not an object)")
        return RunState.from_json(data, str(self.state_path))

    def save(self, state: RunState) -> None:
        """Writes the state atomically (rename), so a crash never leaves half a file."""
        temporary = self.state_path.with_suffix(".tmp")
        try:
            temporary.write_text(json.dumps(state.to_json(), indent=1), encoding="utf-8")
            os.replace(temporary, self.state_path)
        except OSError as exc:
            raise RunDirError(f"cannot write {self.state_path}: {exc.strerror}") from None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Holds the run's lock (one mutating command at a time)."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            handle = open(self.path / LOCK_FILE, "a+")  # noqa: SIM115 - held for the block
        except OSError as exc:
            raise RunDirError(f"cannot lock {self.path}: {exc.strerror}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            handle.close()


def run_dir(name: str, root: Path | None = None) -> RunDir:
    if not name or "/" in name or name in (".", ".."):
        raise RunDirError(f"run name {name!r} must be a plain directory name")
    if name in RESERVED_NAMES:
        raise RunDirError(
            f"run name {name!r} is reserved (the run root keeps {FAILED_DIR}/ and "
            f"{RESULTS_DIR}/ beside the runs); choose another --name"
        )
    return RunDir(_base(root) / name)


def list_runs(root: Path | None = None) -> list[RunDir]:
    """Run directories under ``root`` (those with a state file or a run id), by name."""
    base = _base(root)
    if not base.is_dir():
        return []
    return sorted(
        (
            RunDir(entry)
            for entry in base.iterdir()
            if entry.is_dir()
            and entry.name not in RESERVED_NAMES
            and ((entry / STATE_FILE).exists() or (entry / RUN_ID_FILE).exists())
        ),
        key=lambda rd: rd.name,
    )


def select_run(name: str | None, root: Path | None = None) -> RunDir:
    """The run called ``name``, or the only run under ``root`` when no name is given."""
    if name is not None:
        return run_dir(name, root)
    runs = list_runs(root)
    base = _base(root)
    if not runs:
        raise NotRunningError(f"no fabric is running (no run directory under {base})")
    if len(runs) > 1:
        names = ", ".join(rd.name for rd in runs)
        raise NotRunningError(f"several runs under {base} ({names}); choose one with --name")
    return runs[0]


# ---------------------------------------------------------------------- processes


def start_ticks(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot; None if it is gone or a zombie."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # Field 2 (comm) is parenthesised and may contain spaces; fields after it are plain.
    rest = text[text.rfind(")") + 2 :].split()
    if len(rest) < 20 or rest[0] in ("Z", "X"):
        return None
    return int(rest[19])


def is_alive(record: ProcessRecord) -> bool:
    """True if the recorded process still runs (same pid and same start time)."""
    _reap(record.pid)
    return start_ticks(record.pid) == record.start_ticks


def _reap(pid: int) -> int | None:
    """Collects the exit status of a child of this process; None if it is still running."""
    child = _children.get(pid)
    if child is not None:
        code = child.poll()
        if code is not None:
            _children.pop(pid, None)
            _exit_codes[pid] = code
        return code
    return _exit_codes.get(pid)


def exit_code(record: ProcessRecord) -> int | None:
    """The exit status of a process this Python process started, if it has exited."""
    return _reap(record.pid)


def spawn(
    rundir: RunDir,
    state: RunState,
    *,
    name: str,
    kind: str,
    argv: Sequence[str],
    log: Path,
    env: Mapping[str, str] | None = None,
    netns_pid: int | None = None,
) -> ProcessRecord:
    """Starts a detached process (own session, so it outlives the launcher and can be
    stopped as a group), records it in the state file at once, and returns its record."""
    environment = dict(os.environ)
    if env:
        environment.update(env)
    environment[RUN_ENV] = state.run_id
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as output:
        try:
            child = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=environment,
                close_fds=True,
            )
        except OSError as exc:
            raise ProcessStartError(
                f"{name}: cannot start {argv[0]}: {exc.strerror or exc}"
            ) from None
    return record_process(rundir, state, name, kind, child, argv, log, netns_pid)


def record_process(
    rundir: RunDir,
    state: RunState,
    name: str,
    kind: str,
    child: subprocess.Popen[Any],
    argv: Sequence[str],
    log: Path,
    netns_pid: int | None = None,
) -> ProcessRecord:
    """Records a process this launcher started (and keeps it to reap it)."""
    _children[child.pid] = child
    _exit_codes.pop(child.pid, None)
    ticks = start_ticks(child.pid)
    record = ProcessRecord(
        name, kind, child.pid, ticks if ticks is not None else -1, list(argv), str(log), netns_pid
    )
    state.processes[name] = record
    rundir.save(state)
    return record


def marked_pids(run_id: str) -> list[int]:
    """Processes whose environment carries ``MRC_TESTBED_RUN_ID=run_id`` (not this one)."""
    needle = f"{RUN_ENV}={run_id}".encode()
    found = []
    own = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == own:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def signal_process(pid: int, sig: int) -> None:
    """Signals ``pid``'s process group when ``pid`` leads one (what :func:`spawn` starts),
    else the process alone; a process that is already gone is not an error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)


def stop_processes(pids: Sequence[int], grace: float = DEFAULT_STOP_GRACE_S) -> list[int]:
    """SIGTERM, wait up to ``grace`` seconds, then SIGKILL; returns pids still alive after."""
    alive = {pid: start_ticks(pid) for pid in pids}
    alive = {pid: ticks for pid, ticks in alive.items() if ticks is not None}
    for pid in alive:
        signal_process(pid, signal.SIGTERM)

    def still() -> dict[int, int]:
        for pid in alive:
            _reap(pid)
        return {pid: t for pid, t in alive.items() if start_ticks(pid) == t}

    deadline = time.monotonic() + grace
    while alive and time.monotonic() < deadline:
        alive = still()
        if alive:
            time.sleep(0.02)
    for pid in alive:
        signal_process(pid, signal.SIGKILL)
    deadline = time.monotonic() + 2.0
    while alive and time.monotonic() < deadline:
        alive = still()
        if alive:
            time.sleep(0.02)
    return sorted(alive)


def kill_record(record: ProcessRecord, sig: int = signal.SIGKILL, wait: float = 2.0) -> None:
    """Sends ``sig`` to a recorded process's group (if it is still that process) and waits
    for it to be gone."""
    if not is_alive(record):
        return
    signal_process(record.pid, sig)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if not is_alive(record):
            return
        time.sleep(0.01)
    if sig != signal.SIGKILL:
        signal_process(record.pid, signal.SIGKILL)


# ---------------------------------------------------------------------- teardown


@dataclass
class TeardownReport:
    """What a teardown did to run ``run``: whether it existed, processes stopped, interfaces and
    namespaces deleted, sockets removed."""

    run: str
    existed: bool
    processes_stopped: int = 0
    interfaces_deleted: list[str] = field(default_factory=list)
    namespaces_deleted: list[str] = field(default_factory=list)
    sockets_removed: int = 0

    def summary(self) -> str:
        if not self.existed:
            return f"{self.run}: nothing to stop"
        parts = [f"{self.processes_stopped} processes stopped"]
        if self.interfaces_deleted:
            parts.append(f"{len(self.interfaces_deleted)} interfaces deleted")
        if self.namespaces_deleted:
            parts.append(f"{len(self.namespaces_deleted)} namespaces deleted")
        if self.sockets_removed:
            parts.append(f"{self.sockets_removed} sockets removed")
        return f"{self.run}: " + ", ".join(parts)


def interface_exists(name: str) -> bool:
    return Path("/sys/class/net", name).exists()


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=False)


def teardown(
    rundir: RunDir, *, keep_dir: bool = False, grace: float = DEFAULT_STOP_GRACE_S
) -> TeardownReport:
    """Stops everything the run started and removes its directory (unless ``keep_dir``).

    Safe to call any number of times, with or without a state file, whether the launcher
    finished, failed or was killed."""
    report = TeardownReport(rundir.name, rundir.exists())
    if not report.existed:
        return report
    state: RunState | None
    try:
        state = rundir.load()
    except (RunDirError, NotRunningError):
        state = None  # no or damaged state: the run id in the environment still finds them
    pids: set[int] = set()
    if state is not None:
        pids.update(record.pid for record in state.processes.values() if is_alive(record))
    run_id = state.run_id if state is not None else rundir.run_id()
    if run_id:
        pids.update(marked_pids(run_id))
    left = stop_processes(sorted(pids), grace)
    report.processes_stopped = len(pids) - len(left)
    if left:
        raise TestbedError(
            f"{rundir.name}: processes {', '.join(map(str, left))} survived SIGKILL; "
            "the run directory is kept"
        )
    if state is not None:
        for interface in state.interfaces:
            if interface_exists(interface):
                result = _ip("link", "del", interface)
                if result.returncode == 0 or not interface_exists(interface):
                    report.interfaces_deleted.append(interface)
                else:
                    raise TestbedError(
                        f"{rundir.name}: cannot delete interface {interface}: {result.stderr.strip()}"
                    )
        for namespace in state.namespaces:
            if Path("/run/netns", namespace).exists():
                result = _ip("netns", "del", namespace)
                if result.returncode != 0:
                    raise TestbedError(
                        f"{rundir.name}: cannot delete namespace {namespace}: {result.stderr.strip()}"
                    )
                report.namespaces_deleted.append(namespace)
    for path in rundir.path.rglob("*"):
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(path.lstat().st_mode):
                path.unlink()
                report.sockets_removed += 1
    if not keep_dir:
        shutil.rmtree(rundir.path, ignore_errors=True)
    return report


def retire(rundir: RunDir, reason: str) -> Path:
    """Stops whatever a failed run started and moves its directory (logs, NIC configs and
    event logs, state) to ``<root>/failed/<name>-<UTC time>/``, with ``reason`` in its
    FAILURE file: the evidence stays, but it is no longer a run that later commands must
    choose from (``several runs ...; choose one with --name``). Returns the new path; the
    oldest failed runs beyond :data:`FAILED_KEPT` are removed."""
    teardown(rundir, keep_dir=True)
    failed = rundir.path.parent / FAILED_DIR
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    target = failed / f"{rundir.name}-{stamp}"
    serial = 1
    while target.exists():
        serial += 1
        target = failed / f"{rundir.name}-{stamp}-{serial}"
    try:
        failed.mkdir(parents=True, exist_ok=True)
        (rundir.path / FAILURE_FILE).write_text(reason.rstrip() + "\n", encoding="utf-8")
        (rundir.path / LOCK_FILE).unlink(missing_ok=True)
        os.replace(rundir.path, target)
    except OSError as exc:
        raise RunDirError(
            f"cannot move the failed run {rundir.path} to {target}: {exc.strerror or exc}"
        ) from None
    kept = sorted((p for p in failed.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    for old in kept[: max(0, len(kept) - FAILED_KEPT)]:
        shutil.rmtree(old, ignore_errors=True)
    return target


def retire_failed(rundir: RunDir, state: RunState | None, exc: BaseException) -> BaseException:
    """What a failed ``up`` (or demo) does with its run: marks it failed, stops it,
    :func:`retire` s its directory and adds to ``exc`` a note saying where the logs are.
    Returns ``exc`` for the caller to raise."""
    if state is not None:
        state.phase = "failed"
        with contextlib.suppress(TestbedError):
            rundir.save(state)
    reason = str(exc) or type(exc).__name__
    try:
        kept = retire(rundir, reason)
    except TestbedError as failure:
        exc.add_note(f"the failed run could not be cleaned up: {failure}")
        return exc
    exc.add_note(f"logs and state of the failed run: {kept}")
    return exc
