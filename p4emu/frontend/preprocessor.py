"""A C-preprocessor subset for P4 sources, producing located tokens.

Supported: ``#include <f>`` / ``#include "f"`` (``<core.p4>`` and ``<v1model.p4>`` resolve to
p4emu's own copies first), object-like and function-like ``#define`` (``#`` stringizing,
``##`` pasting, ``...``/``__VA_ARGS__``), ``#undef``, ``#if``/``#ifdef``/``#ifndef``/``#elif``/
``#else``/``#endif`` with integer expressions and ``defined``, ``#error``, ``#warning``,
``#pragma once`` (other pragmas are ignored), ``#line`` and GCC line markers.

Includes are confined: a file is read only from the main program's directory (and below),
the ``-I`` directories (and below) and p4emu's own ``core.p4`` / ``v1model.p4``. An include
whose path is absolute or climbs (``..``) outside those roots, a symbolic link that leads
outside them, a file that is not a regular file (a device, a FIFO) and a file over
:data:`MAX_SOURCE_FILE_BYTES` are refused with an error naming the include as written and
nothing else of the host (the refusal comes before any existence check).

Tokens keep the location of their original file/line/column; tokens produced by a macro
expansion take the location of the macro invocation.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from p4emu.exceptions import P4SourceError
from p4emu.frontend.lexer import (
    EOF,
    IDENT,
    INT,
    KEYWORDS,
    STRING,
    LexError,
    LexState,
    Token,
    lex_line,
)
from p4emu.frontend.source import (  # the limits live there: p4emu.bundle reads them too
    MAX_SOURCE_FILE_BYTES,
    MAX_TOTAL_SOURCE_BYTES,
    SourceLocation,
)

BUILTIN_INCLUDE_DIR = Path(__file__).resolve().parent.parent / "include"
"""p4emu's own core.p4 / v1model.p4."""

PREDEFINED_MACROS = {"__p4emu__": "1", "__TARGET_BMV2__": "1", "__p4c__": "1"}

OTHER_ARCHITECTURES = frozenset(
    {"psa.p4", "pna.p4", "tna.p4", "t2na.p4", "ebpf_model.p4", "ubpf_model.p4", "xdp_model.p4"}
)
"""Architecture includes of other targets: reported as unsupported, not as missing files."""

MAX_INCLUDE_DEPTH = 100
"""Deepest nesting of ``#include`` (a file including a file including ...)."""

MAX_INCLUDES = 1024
"""Most files one program may include in all (each ``#include`` that reads a file counts,
``#pragma once`` repeats do not): a few includes, each including the next twice, would
otherwise read 2^depth files (docs/conformance.md, "Compile limits")."""

MAX_MACRO_EXPANSION_TOKENS = 100_000
"""Most tokens that macro expansion may produce for one program (p4src/mrc_switch.p4: 28;
the largest of the repository's programs): a 300-byte program of
macros each expanding ten times the one before would otherwise expand to 10^7 tokens."""


_OUTSIDE = "it leads outside the program's directory and the include path (-I)"


@dataclass
class Macro:
    """A macro; ``params`` is None for object-like macros."""

    name: str
    params: list[str] | None
    body: list[Token]
    variadic: bool = False
    loc: SourceLocation | None = None


@dataclass
class _Conditional:
    """One open ``#if`` group."""

    loc: SourceLocation
    parent_active: bool
    active: bool
    taken: bool  # some branch of this group was already selected
    seen_else: bool = False


@dataclass
class PreprocessedSource:
    """The preprocessor's output: the tokens (ending with EOF), every file read, in the order
    first read, and the ``#warning`` messages."""

    tokens: list[Token]
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _is_word(token: Token) -> bool:
    return token.kind == IDENT or token.kind in KEYWORDS


class Preprocessor:
    """Expands one translation unit. Create one per program load."""

    def __init__(
        self,
        include_dirs: tuple[str | Path, ...] | list[str | Path] = (),
        defines: dict[str, str] | None = None,
    ) -> None:
        self.include_dirs = [Path(os.path.abspath(d)) for d in include_dirs]
        self._roots: list[Path] = [*self.include_dirs, BUILTIN_INCLUDE_DIR]
        self._total_bytes = 0
        self._includes = 0
        self._expanded_tokens = 0
        self.macros: dict[str, Macro] = {}
        self.files: list[str] = []
        self.warnings: list[str] = []
        self._once: set[Path] = set()
        self._depth = 0
        for name, value in PREDEFINED_MACROS.items():
            self._define_from_text(name, value)
        for name, value in (defines or {}).items():
            self._define_from_text(name, "1" if value is None else str(value))

    # ------------------------------------------------------------------ public entry points

    def run_file(self, path: str | Path) -> PreprocessedSource:
        path = Path(path)
        try:
            info = path.stat()
            if not stat.S_ISREG(info.st_mode):
                raise P4SourceError(str(path), 1, 1, "the source is not a regular file")
            data = self._read_bounded(path)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise P4SourceError(str(path), 1, 1, f"cannot read source file: {reason}") from None
        if data is None:
            raise P4SourceError(str(path), 1, 1, self._too_large())
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise P4SourceError(
                str(path), 1, 1, f"source file is not UTF-8 text: {exc.reason}"
            ) from None
        directory = path.resolve().parent
        self._roots.insert(0, directory)
        tokens = self._process(text, str(path), directory)
        return self._finish(tokens, str(path))

    def run_text(self, text: str, filename: str = "<string>") -> PreprocessedSource:
        directory = Path.cwd()
        self._roots.insert(0, directory)
        tokens = self._process(text, filename, directory)
        return self._finish(tokens, filename)

    def _finish(self, tokens: list[Token], filename: str) -> PreprocessedSource:
        last = tokens[-1].loc if tokens else SourceLocation(filename, 1, 1)
        tokens.append(Token(EOF, "", last))
        return PreprocessedSource(tokens, list(self.files), list(self.warnings))

    # ------------------------------------------------------------------ macros

    def _define_from_text(self, name: str, value: str) -> None:
        loc = SourceLocation("<command-line>", 1, 1)
        try:
            body = lex_line(value, "<command-line>", 1, LexState())
        except LexError as exc:
            raise P4SourceError(
                "<command-line>", 1, 1, f"bad value for macro {name}: {exc.message}"
            ) from None
        self.macros[name] = Macro(name, None, body, loc=loc)

    # ------------------------------------------------------------------ file processing

    def _process(self, text: str, file: str, directory: Path) -> list[Token]:
        self._depth += 1
        if file not in self.files:
            self.files.append(file)
        output: list[Token] = []
        pending: list[Token] = []
        conditionals: list[_Conditional] = []
        state = LexState()
        lines = text.split("\n")
        file_label = file
        line_delta = 0  # adjusted by #line
        index = 0

        def active() -> bool:
            return not conditionals or conditionals[-1].active

        def flush() -> None:
            if pending:
                output.extend(self.expand(pending))
                pending.clear()

        try:
            while index < len(lines):
                raw = lines[index]
                number = index + 1 + line_delta
                stripped = raw.lstrip()
                if state.comment_start is None and stripped.startswith("#"):
                    # Join continuation lines of the directive.
                    directive = raw
                    while directive.endswith("\\") and index + 1 < len(lines):
                        index += 1
                        directive = directive[:-1] + " " + lines[index]
                    directive_state = LexState()
                    column = len(raw) - len(stripped) + 1
                    loc = SourceLocation(file_label, number, column)
                    if active():
                        flush()
                    result = self._directive(
                        directive, file_label, number, loc, directory, conditionals, active(),
                        directive_state, output,
                    )  # fmt: skip
                    if result is not None:
                        file_label, new_line = result
                        line_delta = new_line - (index + 2)
                    state.comment_start = directive_state.comment_start
                    index += 1
                    continue
                if active():
                    pending.extend(lex_line(raw, file_label, number, state))
                else:
                    _skip_line(raw, file_label, number, state)
                index += 1
            if state.comment_start is not None:
                raise LexError(state.comment_start, "unterminated comment")
            if conditionals:
                raise LexError(
                    conditionals[-1].loc, "unterminated conditional directive (missing #endif)"
                )
            flush()
        except LexError as exc:
            raise P4SourceError(exc.loc.file, exc.loc.line, exc.loc.column, exc.message) from None
        finally:
            self._depth -= 1
        return output

    def _directive(
        self,
        text: str,
        file: str,
        line: int,
        loc: SourceLocation,
        directory: Path,
        conditionals: list[_Conditional],
        is_active: bool,
        state: LexState,
        output: list[Token],
    ) -> tuple[str, int] | None:
        """Handle one directive; returns a new (file label, next line number) for #line."""
        hash_pos = text.index("#")
        rest = text[hash_pos + 1 :]
        name_start = len(rest) - len(rest.lstrip())
        word_end = name_start
        while word_end < len(rest) and (rest[word_end].isalnum() or rest[word_end] == "_"):
            word_end += 1
        name = rest[name_start:word_end]
        body = rest[word_end:]
        body_column = hash_pos + 1 + word_end + 1  # 1-based column of body start

        def body_tokens() -> list[Token]:
            tokens = lex_line(" " * (body_column - 1) + body, file, line, state)
            return tokens

        # Conditional structure is tracked even in skipped regions.
        if name in ("if", "ifdef", "ifndef"):
            if not is_active:
                conditionals.append(_Conditional(loc, False, False, True))
                return None
            if name == "if":
                value = self._eval_condition(body_tokens(), loc)
            else:
                tokens = body_tokens()
                if not tokens or not _is_word(tokens[0]):
                    raise LexError(loc, f"#{name} needs a macro name")
                value = (tokens[0].text in self.macros) == (name == "ifdef")
            conditionals.append(_Conditional(loc, True, value, value))
            return None
        if name in ("elif", "else", "endif"):
            if not conditionals:
                raise LexError(loc, f"#{name} without #if")
            top = conditionals[-1]
            if name == "endif":
                conditionals.pop()
                return None
            if top.seen_else:
                raise LexError(loc, f"#{name} after #else")
            if name == "else":
                top.seen_else = True
                top.active = top.parent_active and not top.taken
                top.taken = top.taken or top.active
                return None
            if not top.parent_active or top.taken:
                top.active = False
                return None
            top.active = bool(self._eval_condition(body_tokens(), loc))
            top.taken = top.active
            return None
        if not is_active:
            return None

        if name == "":
            # Null directive, or a GCC line marker "# 12 "file"".
            tokens = body_tokens()
            if tokens and tokens[0].kind == INT:
                return self._line_directive(tokens, file, loc)
            return None
        if name.isdigit():
            tokens = lex_line(text[hash_pos + 1 :], file, line, state)
            return self._line_directive(tokens, file, loc)
        if name == "define":
            self._define(body_tokens(), loc)
        elif name == "undef":
            tokens = body_tokens()
            if not tokens or not _is_word(tokens[0]):
                raise LexError(loc, "#undef needs a macro name")
            self.macros.pop(tokens[0].text, None)
        elif name == "include":
            self._include(body.strip(), loc, directory, output)
        elif name == "error":
            raise LexError(loc, f"#error {body.strip()}".rstrip())
        elif name == "warning":
            self.warnings.append(f"{loc}: warning: {body.strip()}")
        elif name == "pragma":
            if body.strip() == "once":
                self._once.add(Path(file).resolve())
        elif name == "line":
            return self._line_directive(body_tokens(), file, loc)
        else:
            raise LexError(loc, f"unknown preprocessor directive '#{name}'")
        return None

    @staticmethod
    def _line_directive(tokens: list[Token], file: str, loc: SourceLocation) -> tuple[str, int]:
        if not tokens or tokens[0].kind != INT:
            raise LexError(loc, "#line needs a line number")
        number = tokens[0].value[0]  # type: ignore[index]
        label = file
        if len(tokens) > 1 and tokens[1].kind == STRING:
            label = str(tokens[1].value)
        return label, int(number)

    def _define(self, tokens: list[Token], loc: SourceLocation) -> None:
        if not tokens or not _is_word(tokens[0]):
            raise LexError(loc, "#define needs a macro name")
        name_token = tokens[0]
        name = name_token.text
        if name == "defined":
            raise LexError(name_token.loc, "'defined' cannot be used as a macro name")
        rest = tokens[1:]
        # Function-like only when '(' immediately follows the name.
        if rest and rest[0].kind == "(" and not rest[0].space_before:
            params: list[str] = []
            variadic = False
            position = 1
            expect_param = True
            while True:
                if position >= len(rest):
                    raise LexError(loc, f"missing ')' in parameter list of macro {name}")
                token = rest[position]
                if token.kind == ")":
                    position += 1
                    break
                if (
                    expect_param
                    and token.kind == ".."
                    and position + 1 < len(rest)
                    and rest[position + 1].kind == "."
                ):
                    variadic = True
                    params.append("__VA_ARGS__")
                    position += 2
                    expect_param = False
                    continue
                if expect_param and _is_word(token):
                    if token.text in params:
                        raise LexError(token.loc, f"duplicate macro parameter '{token.text}'")
                    params.append(token.text)
                    expect_param = False
                elif not expect_param and token.kind == ",":
                    expect_param = True
                else:
                    raise LexError(token.loc, f"invalid parameter list of macro {name}")
                position += 1
            self.macros[name] = Macro(name, params, rest[position:], variadic, loc)
        else:
            self.macros[name] = Macro(name, None, rest, False, loc)

    def _include(
        self, spec: str, loc: SourceLocation, directory: Path, output: list[Token]
    ) -> None:
        if len(spec) >= 2 and spec[0] == "<" and ">" in spec:
            target = spec[1 : spec.index(">")]
            candidates = [BUILTIN_INCLUDE_DIR / target] + [d / target for d in self.include_dirs]
        elif len(spec) >= 2 and spec[0] == '"' and '"' in spec[1:]:
            target = spec[1 : spec.index('"', 1)]
            candidates = [directory / target] + [d / target for d in self.include_dirs]
            candidates.append(BUILTIN_INCLUDE_DIR / target)
        else:
            raise LexError(loc, '#include expects "FILE" or <FILE>')
        shown = f"{spec[0]}{target}{spec[len(target) + 1]}"
        found = None
        for candidate in candidates:
            found = self._confined(candidate, loc, shown)
            if found is not None:
                break
        if found is None and target in OTHER_ARCHITECTURES:
            raise loc.unsupported(f"architecture {target} (p4emu implements v1model only)")
        if found is None:
            raise LexError(loc, f"include file not found: {shown}")
        if self._depth >= MAX_INCLUDE_DEPTH:
            raise LexError(
                loc,
                f"#include nested too deeply (more than {MAX_INCLUDE_DEPTH} levels, "
                "the limit MAX_INCLUDE_DEPTH)",
            )
        if found in self._once:
            return
        self._includes += 1
        if self._includes > MAX_INCLUDES:
            raise LexError(
                loc,
                f"#include {shown} refused: more than {MAX_INCLUDES} includes in one program "
                "(the limit MAX_INCLUDES)",
            )
        try:
            data = self._read_bounded(found)
        except OSError as exc:
            raise LexError(loc, f"cannot read include file {shown}: {exc.strerror}") from None
        if data is None:
            raise LexError(loc, f"#include {shown} refused: {self._too_large()}")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LexError(loc, f"include file {shown} is not UTF-8 text: {exc.reason}") from None
        output.extend(self._process(text, str(candidate), found.parent))

    def _within_roots(self, path: Path, resolve: bool) -> bool:
        for root in self._roots:
            base = Path(os.path.realpath(root)) if resolve else root
            if path == base or base in path.parents:
                return True
        return False

    def _confined(self, candidate: Path, loc: SourceLocation, shown: str) -> Path | None:
        """The real path of include ``candidate`` if it is a readable regular file inside
        the roots; None if it does not exist; a refusal (LexError) otherwise."""
        lexical = Path(os.path.normpath(candidate))
        if not self._within_roots(lexical, resolve=False):
            raise LexError(loc, f"#include {shown} refused: {_OUTSIDE}")
        if not os.path.lexists(lexical):
            return None
        real = Path(os.path.realpath(lexical))
        if not self._within_roots(real, resolve=True):
            raise LexError(loc, f"#include {shown} refused: a symbolic link; {_OUTSIDE}")
        try:
            info = real.stat()
        except OSError:
            return None
        if stat.S_ISDIR(info.st_mode):
            return None  # a directory of that name: look further along the include path
        if not stat.S_ISREG(info.st_mode):
            raise LexError(loc, f"#include {shown} refused: not a regular file")
        return real

    def _read_bounded(self, path: Path) -> bytes | None:
        """The file's bytes, or None when it exceeds a source size limit."""
        budget = min(MAX_SOURCE_FILE_BYTES, MAX_TOTAL_SOURCE_BYTES - self._total_bytes)
        with path.open("rb") as stream:
            data = stream.read(budget + 1)
        if len(data) > budget:
            return None
        self._total_bytes += len(data)
        return data

    @staticmethod
    def _too_large() -> str:
        return (
            f"larger than the source size limit ({MAX_SOURCE_FILE_BYTES} bytes per file, "
            f"{MAX_TOTAL_SOURCE_BYTES} bytes in all)"
        )

    # ------------------------------------------------------------------ expansion

    def expand(self, tokens: list[Token]) -> list[Token]:
        """Macro-expand a token list (hide sets prevent recursive expansion)."""
        work: deque[tuple[Token, frozenset[str]]] = deque((t, frozenset()) for t in tokens)
        out: list[Token] = []
        while work:
            token, hidden = work.popleft()
            macro = self.macros.get(token.text) if _is_word(token) else None
            if macro is None or token.text in hidden:
                if (
                    _is_word(token)
                    and token.text in ("__LINE__", "__FILE__")
                    and token.text not in self.macros
                ):
                    out.append(_builtin_macro(token))
                else:
                    out.append(token)
                continue
            if macro.params is None:
                self._count_expansion(len(macro.body), token)
                body = self._paste([t.at(token.loc) for t in macro.body], token.loc)
                inner = hidden | {macro.name}
                replacement = [(t, inner) for t in body]
                if replacement:
                    first, first_hidden = replacement[0]
                    replacement[0] = (_with_space(first, token.space_before), first_hidden)
                work.extendleft(reversed(replacement))
                continue
            if not work or work[0][0].kind != "(":
                out.append(token)
                continue
            args, closing_hidden = self._collect_args(work, macro, token)
            new_hidden = (hidden & closing_hidden) | {macro.name}
            body = self._substitute(macro, args, token)  # counted as it is built
            work.extendleft(reversed([(t, new_hidden) for t in body]))
        return out

    def _count_expansion(self, produced: int, invocation: Token) -> None:
        """Counts the tokens a macro invocation produced; refuses past the limit."""
        self._expanded_tokens += produced
        if self._expanded_tokens > MAX_MACRO_EXPANSION_TOKENS:
            raise LexError(
                invocation.loc,
                f"macro expansion produces more than {MAX_MACRO_EXPANSION_TOKENS} tokens "
                f"(the limit MAX_MACRO_EXPANSION_TOKENS; last expanded: "
                f"'{invocation.text[:64]}')",
            )

    def _collect_args(
        self, work: deque[tuple[Token, frozenset[str]]], macro: Macro, name: Token
    ) -> tuple[list[list[Token]], frozenset[str]]:
        work.popleft()  # '('
        args: list[list[Token]] = [[]]
        depth = 0
        while work:
            token, hidden = work.popleft()
            if token.kind == "(":
                depth += 1
            elif token.kind == ")":
                if depth == 0:
                    return self._check_arity(args, macro, name), hidden
                depth -= 1
            elif (
                token.kind == ","
                and depth == 0
                and not (macro.variadic and len(args) == len(macro.params or []))
            ):
                args.append([])
                continue
            args[-1].append(token)
        raise LexError(name.loc, f"unterminated argument list invoking macro '{macro.name}'")

    @staticmethod
    def _check_arity(args: list[list[Token]], macro: Macro, name: Token) -> list[list[Token]]:
        params = macro.params or []
        if len(params) == 0 and args == [[]]:
            return []
        if macro.variadic and len(args) == len(params) - 1:
            args.append([])
        if len(args) != len(params):
            raise LexError(
                name.loc,
                f"macro '{macro.name}' takes {len(params)} argument(s), {len(args)} given",
            )
        return args

    def _substitute(self, macro: Macro, args: list[list[Token]], invocation: Token) -> list[Token]:
        params = macro.params or []
        body = macro.body
        result: list[Token] = []
        index = 0
        while index < len(body):
            token = body[index]
            pasting = (index + 1 < len(body) and body[index + 1].kind == "##") or (
                index > 0 and body[index - 1].kind == "##"
            )
            if token.kind == "#" and index + 1 < len(body) and body[index + 1].text in params:
                arg = args[params.index(body[index + 1].text)]
                text = _stringize(arg)
                result.append(
                    Token(
                        STRING,
                        text,
                        invocation.loc,
                        text[1:-1].replace('\\"', '"').replace("\\\\", "\\"),
                        True,
                    )
                )
                index += 2
                continue
            if _is_word(token) and token.text in params:
                arg = args[params.index(token.text)]
                replacement = list(arg) if pasting else self.expand(list(arg))
                if replacement:
                    replacement[0] = _with_space(replacement[0], token.space_before)
                self._count_expansion(len(replacement), invocation)
                result.extend(replacement)
                if not replacement and pasting:
                    result.append(Token("<placemarker>", "", invocation.loc))
            else:
                self._count_expansion(1, invocation)
                result.append(token.at(invocation.loc))
            index += 1
        return [t for t in self._paste(result, invocation.loc) if t.kind != "<placemarker>"]

    @staticmethod
    def _paste(tokens: list[Token], loc: SourceLocation) -> list[Token]:
        if not any(t.kind == "##" for t in tokens):
            return tokens
        result: list[Token] = []
        index = 0
        while index < len(tokens):
            token = tokens[index]
            if token.kind == "##" and result and index + 1 < len(tokens):
                left = result.pop()
                right = tokens[index + 1]
                text = left.text + right.text
                if not text:
                    result.append(Token("<placemarker>", "", loc))
                else:
                    pasted = lex_line(text, loc.file, loc.line, LexState())
                    if len(pasted) != 1:
                        raise LexError(
                            loc,
                            f"pasting '{left.text}' and '{right.text}' does not give a valid token",
                        )
                    result.append(pasted[0].at(loc))
                index += 2
                continue
            result.append(token)
            index += 1
        return result

    # ------------------------------------------------------------------ #if expressions

    def _eval_condition(self, tokens: list[Token], loc: SourceLocation) -> int:
        # Replace defined(X) / defined X before expansion.
        resolved: list[Token] = []
        index = 0
        while index < len(tokens):
            token = tokens[index]
            if token.text == "defined":
                if index + 1 < len(tokens) and tokens[index + 1].kind == "(":
                    if index + 3 >= len(tokens) or tokens[index + 3].kind != ")":
                        raise LexError(token.loc, "malformed 'defined' in #if")
                    name = tokens[index + 2].text
                    index += 4
                elif index + 1 < len(tokens) and _is_word(tokens[index + 1]):
                    name = tokens[index + 1].text
                    index += 2
                else:
                    raise LexError(token.loc, "malformed 'defined' in #if")
                resolved.append(
                    Token(
                        INT,
                        "1" if name in self.macros else "0",
                        token.loc,
                        (int(name in self.macros), None, False),
                    )
                )
                continue
            resolved.append(token)
            index += 1
        expanded = self.expand(resolved)
        if not expanded:
            raise LexError(loc, "#if with no expression")
        evaluator = _ConditionEvaluator(expanded, loc)
        return evaluator.evaluate()


def _with_space(token: Token, space: bool) -> Token:
    if token.space_before == space:
        return token
    return Token(token.kind, token.text, token.loc, token.value, space)


def _builtin_macro(token: Token) -> Token:
    if token.text == "__LINE__":
        return Token(
            INT, str(token.loc.line), token.loc, (token.loc.line, None, False), token.space_before
        )
    text = '"' + token.loc.file.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return Token(STRING, text, token.loc, token.loc.file, token.space_before)


def _stringize(tokens: list[Token]) -> str:
    parts: list[str] = []
    for position, token in enumerate(tokens):
        if position and token.space_before:
            parts.append(" ")
        text = token.text
        if token.kind == STRING:
            text = text.replace("\\", "\\\\").replace('"', '\\"')
        parts.append(text)
    return '"' + "".join(parts) + '"'


def _skip_line(text: str, file: str, line: int, state: LexState) -> None:
    """Track block comments through a skipped (#if 0) line without tokenizing it."""
    pos = 0
    in_string = False
    while pos < len(text):
        if state.comment_start is not None:
            end = text.find("*/", pos)
            if end < 0:
                return
            state.comment_start = None
            pos = end + 2
            continue
        char = text[pos]
        if in_string:
            if char == "\\":
                pos += 2
                continue
            if char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif text.startswith("//", pos):
            return
        elif text.startswith("/*", pos):
            state.comment_start = SourceLocation(file, line, pos + 1)
            pos += 2
            continue
        pos += 1


class _ConditionEvaluator:
    """Evaluates a C-style integer constant expression (``#if``)."""

    BINARY = {
        "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
        "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9,
        "*": 10, "/": 10, "%": 10,
    }  # fmt: skip

    def __init__(self, tokens: list[Token], loc: SourceLocation) -> None:
        self.tokens = self._merge_shifts(tokens)
        self.position = 0
        self.loc = loc

    @staticmethod
    def _merge_shifts(tokens: list[Token]) -> list[Token]:
        merged: list[Token] = []
        for token in tokens:
            if token.kind == ">" and merged and merged[-1].kind == ">" and not token.space_before:
                merged[-1] = Token(">>", ">>", merged[-1].loc)
            else:
                merged.append(token)
        return merged

    def peek(self) -> Token | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def next(self) -> Token:
        token = self.peek()
        if token is None:
            raise LexError(self.loc, "unexpected end of #if expression")
        self.position += 1
        return token

    def evaluate(self) -> int:
        value = self.ternary()
        token = self.peek()
        if token is not None:
            raise LexError(token.loc, f"unexpected '{token.text}' in #if expression")
        return value

    def ternary(self) -> int:
        condition = self.binary(1)
        token = self.peek()
        if token is not None and token.kind == "?":
            self.next()
            then = self.ternary()
            colon = self.next()
            if colon.kind != ":":
                raise LexError(colon.loc, "expected ':' in #if expression")
            otherwise = self.ternary()
            return then if condition else otherwise
        return condition

    def binary(self, min_precedence: int) -> int:
        left = self.unary()
        while True:
            token = self.peek()
            if token is None or token.kind not in self.BINARY:
                return left
            precedence = self.BINARY[token.kind]
            if precedence < min_precedence:
                return left
            self.next()
            right = self.binary(precedence + 1)
            left = self._apply(token, left, right)

    def _apply(self, token: Token, left: int, right: int) -> int:
        op = token.kind
        if op in ("/", "%") and right == 0:
            raise LexError(token.loc, "division by zero in #if expression")
        operations = {
            "||": lambda: int(bool(left) or bool(right)),
            "&&": lambda: int(bool(left) and bool(right)),
            "|": lambda: left | right,
            "^": lambda: left ^ right,
            "&": lambda: left & right,
            "==": lambda: int(left == right),
            "!=": lambda: int(left != right),
            "<": lambda: int(left < right),
            ">": lambda: int(left > right),
            "<=": lambda: int(left <= right),
            ">=": lambda: int(left >= right),
            "<<": lambda: left << right,
            ">>": lambda: left >> right,
            "+": lambda: left + right,
            "-": lambda: left - right,
            "*": lambda: left * right,
            "/": lambda: int(left / right),
            "%": lambda: left - right * int(left / right),
        }
        return operations[op]()

    def unary(self) -> int:
        token = self.next()
        if token.kind == "!":
            return int(not self.unary())
        if token.kind == "~":
            return ~self.unary()
        if token.kind == "-":
            return -self.unary()
        if token.kind == "+":
            return self.unary()
        if token.kind == "(":
            value = self.ternary()
            closing = self.next()
            if closing.kind != ")":
                raise LexError(closing.loc, "expected ')' in #if expression")
            return value
        if token.kind == INT:
            return int(token.value[0])  # type: ignore[index]
        if token.kind == "true":
            return 1
        if token.kind == "false":
            return 0
        if _is_word(token):
            return 0  # undefined identifiers are 0, as in C
        raise LexError(token.loc, f"unexpected '{token.text}' in #if expression")
