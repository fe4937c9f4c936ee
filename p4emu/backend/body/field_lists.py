"""Field lists (hash, checksum, digest and clone data): flattened fields and their bytes."""

from __future__ import annotations

from p4emu.backend.body.core import BodyCore, is_simple
from p4emu.backend.codewriter import py_attr
from p4emu.backend.compile_helpers import (
    compile_error,
    to_unsigned,
    unsupported,
)
from p4emu.backend.exceptions import CompileError
from p4emu.backend.pytypes import (
    bit_width,
    scalar_type,
)
from p4emu.frontend import ast
from p4emu.frontend import types as t


class FieldListCode(BodyCore):
    """Field lists: a part of
    :class:`~p4emu.backend.body.BodyCompiler`."""

    # ------------------------------------------------------------------ field lists

    def field_list(
        self, data: ast.Expr, *, copies_fields: bool = False, calculation: bool = True
    ) -> list[tuple[str, int | None, str | None]]:
        """Flatten a field-list argument (``{a, b}``, a struct/header value, one field) into
        ``(value code, width, validity code)`` triples, in order. ``width`` None marks a
        varbit field (``value`` is the ``(nbits, value)`` tuple); ``validity`` is the
        expression telling whether the field's header is valid (BMv2 skips fields of
        invalid headers), or None for fields that are always included.

        With ``copies_fields`` (hash, digest) p4c 1.2.4.8 copies every listed field into a
        temporary first, so a field of an invalid header counts with its stored value
        (BMv2 keeps it after ``setInvalid()``; 0 in a header never valid); a whole header
        in the list is copied into a temporary header, which is skipped when invalid, as
        is a header as the whole data. Checksums (no copies) skip every field of an
        invalid header. A struct-typed header field as the whole data stands for its
        leaves, so it follows the same rule. In the data of a ``calculation`` (hash,
        checksum) it must be the whole data and hold no nested struct
        (:meth:`_flatten_group`); a digest takes it anywhere."""
        out: list[tuple[str, int | None, str | None]] = []
        self._flatten(data, out, (copies_fields, calculation), top=True)
        return out

    def _flatten(
        self, e: ast.Expr, out: list, groups: tuple[bool, bool], top: bool = False
    ) -> None:
        type_ = e.type
        if isinstance(e, (ast.ListExpr,)):
            for element in e.elements:
                self._flatten(element, out, groups)
            return
        if isinstance(e, ast.StructExpr):
            for f in e.fields:
                self._flatten(f.value, out, groups)
            return
        if isinstance(e, ast.Member) and isinstance(type_, t.HeaderGroupType):
            self._flatten_group(e, type_, out, groups, top)
            return
        if (
            type_ is not None
            and isinstance(type_, t.StructLikeType)
            and not isinstance(type_, t.HeaderUnionType)
        ):
            base = self.ex(e)
            if not is_simple(base):
                tmp = self.fresh("fl")
                self.w.line(f"{tmp} = {base}")
                base = tmp
            validity = f"{base}.valid_" if isinstance(type_, t.HeaderType) else None
            self._flatten_object(base, type_, validity, out)
            return
        copies = groups[0]
        if type_ is not None and isinstance(scalar_type(type_), t.VarbitType):
            # copied too (p4c: into a temporary header, always valid): its stored bits
            out.append((self.ex(e), None, None if copies else self.header_validity(e)))
            return
        width = bit_width(type_) if type_ is not None else None
        if width is None:
            raise unsupported(
                e, f"field of type {type_.describe() if type_ else '?'} in a field list"
            )
        code = to_unsigned(self.ex(e), type_)  # type: ignore[arg-type]
        out.append((code, width, None if copies else self.header_validity(e)))

    def _flatten_group(
        self,
        e: ast.Member,
        group: t.HeaderGroupType,
        out: list,
        groups: tuple[bool, bool],
        top: bool,
    ) -> None:
        """A struct-typed header field in a field list. In a hash or checksum, p4c 1.2.4.8
        lowers one inside a list, or one holding a nested struct, to a nested field list
        that BMv2 1.15 cannot load (the switch stops at start): refused there. A digest
        takes it anywhere (p4c flattens its learn list)."""
        copies, calculation = groups
        where = ""
        if calculation and not top:
            where = "inside a list"
        elif calculation and any(isinstance(f.type, t.StructType) for f in group.struct.fields):
            where = f"whose struct {group.struct} holds a struct"
        if where:
            raise compile_error(
                e,
                f"the struct-typed header field '{ast.expr_to_source(e)}' {where} in a field "
                "list: p4c 1.2.4.8 makes it a nested field list, which BMv2 1.15 cannot load "
                "(list its fields instead)",
            )
        header, leaves = self.group_leaves(e, group)
        validity = None if copies else f"{header}.valid_"
        for _, attr, info in leaves:
            code = to_unsigned(f"{header}.{attr}", info.type)
            out.append((code, bit_width(info.type), validity))

    def _flatten_object(
        self, base: str, type_: t.StructLikeType, validity: str | None, out: list
    ) -> None:
        for info in type_.fields:
            code = f"{base}.{py_attr(info.name)}"
            ftype = info.type
            if isinstance(ftype, t.HeaderType):
                self._flatten_object(code, ftype, f"{code}.valid_", out)
            elif isinstance(ftype, t.StructType):
                self._flatten_object(code, ftype, validity, out)
            elif isinstance(ftype, t.HeaderStackType):
                for index in range(ftype.size):
                    item = f"{code}.items[{index}]"
                    self._flatten_object(item, ftype.element, f"{item}.valid_", out)  # type: ignore[arg-type]
            elif isinstance(scalar_type(ftype), t.VarbitType):
                out.append((code, None, validity))
            else:
                width = bit_width(ftype)
                if width is None:
                    raise CompileError(
                        f"field {info.name} of type {ftype.describe()} in a field list"
                    )
                out.append((to_unsigned(code, ftype), width, validity))

    def header_validity(self, e: ast.Expr) -> str | None:
        """Validity expression of the header a field expression belongs to, if any."""
        if isinstance(e, ast.Member) and e.kind == ast.MEMBER_FIELD:
            base_type = e.expr.type
            if isinstance(base_type, t.HeaderType):
                return f"{self.ex(e.expr)}.valid_"
        return None

    def field_list_bytes(self, data: ast.Expr, *, copies_fields: bool = False) -> str:
        """Expression: the bytes BMv2 builds from a field list (bits concatenated MSB
        first, zero-padded to a byte; which fields of invalid headers are skipped:
        :meth:`field_list`)."""
        fields = self.field_list(data, copies_fields=copies_fields)
        static = all(width is not None and validity is None for _, width, validity in fields)
        if static:
            total = sum(width for _, width, _ in fields)  # type: ignore[misc]
            if total == 0:
                return "b''"
            pad = -total & 7
            terms = []
            shift = total + pad
            for code, width, _ in fields:
                shift -= width  # type: ignore[operator]
                masked = code
                terms.append(f"({masked} << {shift})" if shift else masked)
            return f"({' | '.join(terms)}).to_bytes({(total + pad) // 8}, 'big')"
        acc = self.fresh("acc")
        nbits = self.fresh("nb")
        self.w.line(f"{acc} = 0")
        self.w.line(f"{nbits} = 0")
        # group consecutive fields with the same validity condition
        groups: list[tuple[str | None, list[tuple[str, int | None]]]] = []
        for code, width, validity in fields:
            if groups and groups[-1][0] == validity:
                groups[-1][1].append((code, width))
            else:
                groups.append((validity, [(code, width)]))
        for validity, members in groups:
            if validity is not None:
                ctx = self.w.block(f"if {validity}:")
                ctx.__enter__()
            for code, width in members:
                if width is None:
                    self.w.line(f"_vl, _vv = {code}")
                    self.w.line(f"{acc} = ({acc} << _vl) | _vv")
                    self.w.line(f"{nbits} += _vl")
                else:
                    self.w.line(f"{acc} = ({acc} << {width}) | {code}")
                    self.w.line(f"{nbits} += {width}")
            if validity is not None:
                ctx.__exit__(None, None, None)
        out = self.fresh("buf")
        self.w.line(f"_pad = -{nbits} & 7")
        self.w.line(f"{out} = ({acc} << _pad).to_bytes(({nbits} + _pad) >> 3, 'big')")
        return out
