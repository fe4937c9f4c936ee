"""A fork server for ``p4emu-switch`` processes: import once, fork many.

Starting a p4emu-switch costs ~0.55 s of CPU, almost all of it importing Python modules
(gRPC, the P4Runtime protos, p4emu's front and back end). A fabric of 24 switches on a
2-CPU machine spends most of its bring-up doing that 24 times. The zygote imports
``p4emu.server.main`` once (single-threaded: nothing has started a thread yet, so forking is
safe), optionally compiles the program once to warm p4emu's caches, then forks one child
per switch; each child becomes its own session (``setsid``), sends its output to the
switch's log and runs ``p4emu.server.main.main(args)`` — exactly what the ``p4emu-switch``
command runs, with the same arguments.

Protocol (JSON lines on the zygote's stdin/stdout): request ``{"args": [...], "log": PATH}``,
answer ``{"pid": N}`` or ``{"error": TEXT}``. The zygote exits when its stdin closes; its
children carry on (reparented to init). They inherit ``MRC_TESTBED_RUN_ID`` like every
process of the run, and the launcher records each with the ordinary ``p4emu-switch``
command line, so ``switch up`` restarts them the ordinary way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from testbed.exceptions import ProcessStartError
from testbed.rundir import ProcessRecord, RunDir, RunState, record_process, start_ticks


def _child(args: list[str], log: str) -> None:
    """In the forked child: detach, redirect, run the switch; never returns."""
    code = 1
    try:
        os.setsid()
        output = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.close(output)
        os.close(devnull)
        from p4emu.server.main import main

        sys.argv = ["p4emu-switch", *args]
        code = main(args)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _warm(program: str) -> None:
    """Compiles ``program`` once so the children inherit whatever p4emu caches."""
    from p4emu.switch import Switch

    Switch(program, cpu_port=510, priority_queues=8)


def serve(requests: IO[str], answers: IO[str], warm: str | None) -> int:
    import p4emu.server.main  # noqa: F401 - the point: import before forking

    if warm:
        try:
            _warm(warm)
        except Exception as exc:  # only an optimisation: the children compile anyway
            print(f"zygote: warming with {warm} failed: {exc}", file=sys.stderr, flush=True)
    answers.write(json.dumps({"ready": True}) + "\n")
    answers.flush()
    for line in requests:
        try:
            request = json.loads(line)
            args, log = [str(a) for a in request["args"]], str(request["log"])
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            answers.write(json.dumps({"error": f"bad request: {exc}"}) + "\n")
            answers.flush()
            continue
        pid = os.fork()
        if pid == 0:
            _child(args, log)
        answers.write(json.dumps({"pid": pid}) + "\n")
        answers.flush()
    return 0


class Zygote:
    """The launcher's handle on a running zygote."""

    def __init__(self, rundir: RunDir, state: RunState, warm: Path | None = None) -> None:
        log = rundir.file("switches", "zygote.log")
        log.parent.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "testbed.zygote"] + (["--warm", str(warm)] if warm else [])
        environment = dict(os.environ, MRC_TESTBED_RUN_ID=state.run_id)
        with open(log, "ab") as output:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=output,
                text=True,
                start_new_session=True,
                env=environment,
            )
        self.log = log
        self.record = record_process(
            rundir, state, "zygote:p4emu-switch", "zygote", self.process, argv, log
        )
        self._ready = False  # waited for at the first fork: the launcher works meanwhile

    def _expect(self, key: str) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        try:
            answer = json.loads(line) if line else {}
        except json.JSONDecodeError:
            answer = {}
        if key not in answer:
            self.close()
            reason = answer.get("error") or f"it exited; see {self.log}"
            raise ProcessStartError(f"the p4emu-switch fork server failed: {reason}")
        return answer

    def fork(
        self,
        rundir: RunDir,
        state: RunState,
        name: str,
        command: Sequence[str],
        args: Sequence[str],
        log: Path,
    ) -> ProcessRecord:
        """Forks one switch; records it with ``command + args`` (its ordinary command line)."""
        assert self.process.stdin is not None
        if not self._ready:
            self._expect("ready")
            self._ready = True
        log.parent.mkdir(parents=True, exist_ok=True)
        self.process.stdin.write(json.dumps({"args": list(args), "log": str(log)}) + "\n")
        self.process.stdin.flush()
        pid = int(self._expect("pid")["pid"])
        ticks = start_ticks(pid)
        record = ProcessRecord(
            name, "switch", pid, ticks if ticks is not None else -1, [*command, *args], str(log)
        )
        state.processes[name] = record
        rundir.save(state)
        return record

    def close(self) -> None:
        """Ends the zygote (its children keep running)."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    warm = args[1] if len(args) == 2 and args[0] == "--warm" else None
    return serve(sys.stdin, sys.stdout, warm)


if __name__ == "__main__":
    sys.exit(main())
