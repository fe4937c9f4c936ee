"""Source locations: every token and AST node remembers where it came from."""

from __future__ import annotations

from dataclasses import dataclass

from p4emu.exceptions import P4SourceError, P4UnsupportedError

MAX_SOURCE_FILE_BYTES = 4 * 1024 * 1024
"""Largest source file (the program or one include) the preprocessor reads."""

MAX_TOTAL_SOURCE_BYTES = 16 * 1024 * 1024
"""Largest total of all source files of one program (also the limit of a source bundle)."""


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A position in an original (pre-preprocessing) source file; line and column are 1-based."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def __reduce__(self) -> tuple[type[SourceLocation], tuple[str, int, int]]:
        # pickled as a constructor call: every node of a checked program has one, and
        # dataclasses' own state of a frozen class with slots (a fields() call and a
        # setattr per field) made a third of the checked-program cache's unpickling
        return SourceLocation, (self.file, self.line, self.column)

    def error(self, message: str) -> P4SourceError:
        """Build (not raise) a source error at this location."""
        return P4SourceError(self.file, self.line, self.column, message)

    def unsupported(self, construct: str) -> P4UnsupportedError:
        """Build (not raise) an unsupported-construct error at this location."""
        return P4UnsupportedError(self.file, self.line, self.column, construct)


UNKNOWN_LOCATION = SourceLocation("<builtin>", 0, 0)
