"""The one ``main()`` wrapper of every console script, and the project's exit codes.

The convention (docs/exit-codes.md, one table for all five commands: ``p4emu``,
``p4emu-switch``, ``mrc-controller``, ``nic-emu``, ``mrc-testbed``):

====  =======================================================================
0     ``EXIT_OK``: success (or the reader of our output went away: ``| head``)
1     ``EXIT_FAILURE``: the operation failed (a switch that cannot listen, a transfer
      that failed, a fabric that did not come up); one line (or short block) on stderr
2     ``EXIT_USAGE``: a bad invocation or a bad input file (argparse's own errors, a
      missing or malformed program, topology, scenario or config), found before anything
      starts
3     ``EXIT_UNHEALTHY``: the fabric (or a switch of it) is unhealthy or differs from its
      plan (``mrc-testbed status``, ``mrc-controller push`` to a switch that fails)
130   ``EXIT_INTERRUPTED``: Ctrl-C (SIGINT)
====  =======================================================================

:func:`run_main` runs a command's body and turns whatever ends it into one of these.
A command maps its exception types onto them with ``codes`` (looked up along the
exception's class hierarchy; anything else expected is 1). Expected errors print
``prog: message`` followed by the exception's notes (``add_note``: where the logs of a
failed run are kept); an unexpected exception is a bug: it prints ``prog: internal error:
TYPE: MESSAGE`` (exit 1) and, with ``$MRC_TRACEBACK=1`` in the environment, the traceback
before it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import TextIO

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_UNHEALTHY = 3
EXIT_INTERRUPTED = 130
TRACEBACK_ENV = "MRC_TRACEBACK"

ErrorTypes = tuple[type[BaseException], ...]


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush
    does not fail again ("Exception ignored ... BrokenPipeError")."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _say(prog: str | None, text: str, stream: TextIO | None = None) -> None:
    """``prog: text`` on stderr (``text`` alone when ``prog`` is None)."""
    with contextlib.suppress(OSError, ValueError):
        print(f"{prog}: {text}" if prog else text, file=stream or sys.stderr, flush=True)


def _with_notes(text: str, exc: BaseException) -> str:
    """The message and the exception's notes (``add_note``: e.g. where the logs are)."""
    return "\n".join([text, *getattr(exc, "__notes__", ())])


def _code_for(exc: BaseException, codes: Mapping[type[BaseException], int]) -> int:
    for kind in type(exc).__mro__:
        if kind in codes:
            return codes[kind]
    return EXIT_FAILURE


def run_main(
    prog: str,
    body: Callable[[], int | None],
    *,
    expected: ErrorTypes = (),
    codes: Mapping[type[BaseException], int] | None = None,
    message: Callable[[BaseException], str] = str,
    bare: bool = False,
    stderr: TextIO | None = None,
) -> int:
    """Runs ``body`` and returns its exit code (None counts as 0).

    ``expected``: exception types that are a user's or the environment's fault: printed as
    ``prog: <message(exc)>``, exit code from ``codes`` (looked up along the exception's
    class hierarchy), else 1. ``SystemExit`` (argparse: 0 for ``--help``, 2 for a bad
    argument) passes its code through. ``bare``: expected errors are printed without the
    ``prog:`` prefix (compiler-style messages that start with ``FILE:LINE:COL:``).
    ``stderr``: where messages go (default ``sys.stderr``)."""
    code_map = dict(codes or {})
    try:
        code = body()
        with contextlib.suppress(AttributeError, ValueError):
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return EXIT_OK if code is None else int(code)
    except SystemExit as exc:
        if exc.code is None:
            return EXIT_OK
        if isinstance(exc.code, int):
            return exc.code
        _say(prog, str(exc.code), stderr)
        return EXIT_FAILURE
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except KeyboardInterrupt as exc:
        _say(prog, _with_notes("interrupted", exc), stderr)
        return EXIT_INTERRUPTED
    except expected as exc:  # type: ignore[misc]
        _say(None if bare else prog, _with_notes(message(exc), exc), stderr)
        return _code_for(exc, code_map)
    except Exception as exc:  # a bug: say so in one line, traceback on request
        if os.environ.get(TRACEBACK_ENV):
            traceback.print_exc()
        _say(prog, f"internal error: {type(exc).__name__}: {exc}", stderr)
        return EXIT_FAILURE
