"""Errors raised by ``p4emu.backend`` (the P4 -> Python compiler) and its runtime objects.

Every error a user can cause is a subclass of :class:`BackendError` and carries a
specific, human-readable message: a program construct the compiler does not implement
(:class:`CompileError`, with the source location), a bad control-plane write to an
action profile or a value set, a malformed controller packet header.
"""

from __future__ import annotations

from p4emu.exceptions import P4EmuError


class BackendError(P4EmuError):
    """Base class of every error raised by ``p4emu.backend``."""


class CompileError(BackendError):
    """The checked program cannot be compiled (``file:line:col: message``)."""

    def __init__(self, message: str, file: str = "", line: int = 0, column: int = 0) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        where = f"{file}:{line}:{column}: " if file else ""
        super().__init__(f"{where}error: {message}")


class SwitchError(BackendError):
    """A bad argument to the in-process switch API (port out of range, no CPU port...)."""


class P4AssertionError(BackendError):
    """A P4 ``assert``/``assume`` failed (BMv2 aborts the switch process)."""


# --- action profiles / selectors ----------------------------------------------------------


class ActionProfileError(BackendError):
    """Base of action profile errors; ``profile`` names the profile."""

    def __init__(self, profile: str, message: str) -> None:
        self.profile = profile
        super().__init__(f"action profile {profile}: {message}")


class MemberExistsError(ActionProfileError):
    """A member or group with this id already exists (P4Runtime ALREADY_EXISTS)."""


class MemberNotFoundError(ActionProfileError):
    """No member / group with this id (P4Runtime NOT_FOUND)."""


class MemberInUseError(ActionProfileError):
    """A member or group is still referenced by a table entry or a group (FAILED_PRECONDITION)."""


class InvalidMemberError(ActionProfileError):
    """A bad member/group: unknown action, bad arguments, group too large (INVALID_ARGUMENT)."""


class ProfileFullError(ActionProfileError):
    """The profile already holds ``size`` members (RESOURCE_EXHAUSTED)."""


# --- value sets ---------------------------------------------------------------------------


class ValueSetError(BackendError):
    """A bad value set write: wrong arity, value too wide, set full (``value_set`` named)."""

    def __init__(self, value_set: str, message: str) -> None:
        self.value_set = value_set
        super().__init__(f"value set {value_set}: {message}")


class ValueSetFullError(ValueSetError):
    """The value set already holds ``size`` entries (RESOURCE_EXHAUSTED)."""


# --- controller packet metadata -----------------------------------------------------------


class ControllerHeaderError(BackendError):
    """A packet_out metadata dict or a packet_in frame does not fit the controller header."""
