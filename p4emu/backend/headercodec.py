"""Generated extract / emit code for header types (one ``struct`` call per header).

BMv2 only handles headers whose size is a whole number of bytes, and parses at byte
offsets, so the generated code works on byte offsets. Fields are grouped into
byte-aligned *chunks* (a run of fields ending on a byte boundary); each chunk is read
with big-endian ``struct`` codes (``Q``/``I``/``H``/``B`` greedily) so a whole header
costs one ``unpack_from`` and one ``pack`` call, plus shifts for sub-byte fields. An
unsigned field of 65 to 128 bits (an IPv6 address, a SID) is its two halves
(:mod:`p4emu.backend.wide`), two fields of the chunks: a 64-bit half is one ``Q`` part
read into and written from its attribute directly. Another field wider than 64 bits
alone in its chunk (``int<128>``, ``bit<200>``) is one ``Ns`` part, its value
``int.from_bytes`` of those bytes and its bytes ``int.to_bytes`` of its value (a header
that is only that field needs no ``struct`` call at all).

Headers with a ``varbit`` field get a generated helper function working on one big
integer, since the field positions after the varbit are only known per packet.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from p4emu.backend.codewriter import py_attr
from p4emu.backend.exceptions import CompileError
from p4emu.backend.wide import HALF_BITS, split_fields
from p4emu.frontend import types as t

_CODES = ((8, "Q"), (4, "I"), (2, "H"), (1, "B"))
#: the widest temporary the parser's extract code annotates as a C integer (its values,
#: and the shifts and masks that split them into fields, stay below 2**63)
TYPED_TEMPORARY_BITS = 63
#: a header field alone in a byte-aligned chunk wider than this many bytes (more than the
#: widest ``struct`` integer code, ``Q``) is read and written as one ``Ns`` string part
WIDE_FIELD_BYTES = 8
#: the generated code's conversion of a wide field's bytes to its value (bound once into
#: its namespace: :meth:`HeaderCodec.extract_lines`'s ``from_bytes``)
FROM_BYTES = int.from_bytes
#: and of a wide field's value to its bytes (:meth:`HeaderCodec.emit_expr`'s ``to_bytes``:
#: called as ``TO_BYTES(value, n, 'big')``; compiled, ``value.to_bytes(n, 'big')`` would
#: build a bound method and call it through an argument tuple each time)
TO_BYTES = int.to_bytes

# --- the native deparser (``cython.compiled`` branches of the generated text) ----------
#: the deparser's locals on the native path: the headers' bytes (a C array of
#: :func:`native_buffer_bytes` bytes), how many are written, a chunk's value as a C
#: ``unsigned long long``; and the payload / finished packet (Python objects)
NATIVE_BUF, NATIVE_LEN, NATIVE_CHUNK = "_dpb", "_dpn", "_dpc"
NATIVE_PAYLOAD, NATIVE_FRAME, NATIVE_PAYLOAD_AT = "_dpp", "_dpf", "_dpa"
#: the parser's: the packet's bytes (a C ``unsigned char *``), the offset of the header
#: being extracted (C), a wide chunk's value (a Python ``int``)
NATIVE_DATA, NATIVE_AT, NATIVE_WIDE = "_pdp", "_pdo", "_pdw"
#: a chunk at most this many bytes is one C ``unsigned long long`` (its fields shifted
#: and or-ed in C); a wider one is converted by CPython from its Python ``int``
NATIVE_CHUNK_BYTES = 8
#: the generated ``.pxd``'s declarations the native deparser and parser use: CPython's
#: bytes, ``memcpy``, and the big-endian conversions of a wide value (``P4_INT_TO_BE``
#: writes ``n`` bytes of a non-negative ``int``, raising ``OverflowError`` as
#: ``int.to_bytes`` would; ``P4_INT_FROM_BE`` reads them back: ``int.from_bytes``) and of
#: a chunk (``P4_LOAD_BE``: the value of ``n`` bytes, 1 to 8; ``P4_STORE_BE``: the low
#: ``n`` bytes of a value written; ``n`` a constant of the text: with GCC or Clang on a
#: little-endian machine one copy and one byte swap, which the compiler folds into a
#: load or store and a ``bswap``; elsewhere a loop over the bytes)
NATIVE_PXD = '''from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.string cimport memcpy
cdef extern from *:
    """
    #if PY_VERSION_HEX >= 0x030D0000
    static int P4_INT_TO_BE(PyObject *v, unsigned char *p, Py_ssize_t n) {
        Py_ssize_t r = PyLong_AsNativeBytes(v, p, n,
            Py_ASNATIVEBYTES_BIG_ENDIAN | Py_ASNATIVEBYTES_UNSIGNED_BUFFER
            | Py_ASNATIVEBYTES_REJECT_NEGATIVE);
        if (r < 0) return -1;
        if (r > n) {
            PyErr_SetString(PyExc_OverflowError, "int too big to convert");
            return -1;
        }
        return 0;
    }
    #define P4_INT_FROM_BE(p, n) PyLong_FromUnsignedNativeBytes((p), (n), 1)
    #else
    #define P4_INT_TO_BE(v, p, n) _PyLong_AsByteArray((PyLongObject *)(v), (p), (n), 0, 0)
    #define P4_INT_FROM_BE(p, n) _PyLong_FromByteArray((p), (n), 0, 0)
    #endif
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) \
        && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    static CYTHON_INLINE unsigned long long P4_LOAD_BE(const unsigned char *p, int n) {
        unsigned long long v = 0;
        memcpy((unsigned char *)&v + (8 - n), p, n);
        return __builtin_bswap64(v);
    }
    static CYTHON_INLINE void P4_STORE_BE(unsigned char *p, unsigned long long v, int n) {
        v = __builtin_bswap64(v);
        memcpy(p, (unsigned char *)&v + (8 - n), n);
    }
    #else
    static CYTHON_INLINE unsigned long long P4_LOAD_BE(const unsigned char *p, int n) {
        unsigned long long v = 0;
        int i;
        for (i = 0; i < n; i++) v = (v << 8) | p[i];
        return v;
    }
    static CYTHON_INLINE void P4_STORE_BE(unsigned char *p, unsigned long long v, int n) {
        int i;
        for (i = n - 1; i >= 0; i--) { p[i] = (unsigned char)v; v >>= 8; }
    }
    #endif
    """
    int P4_INT_TO_BE(object v, unsigned char *p, Py_ssize_t n) except -1
    object P4_INT_FROM_BE(const unsigned char *p, Py_ssize_t n)
    unsigned long long P4_LOAD_BE(const unsigned char *p, int n)
    void P4_STORE_BE(unsigned char *p, unsigned long long v, int n)
'''


@dataclass
class _Field:
    """One header field as the codec reads it: attribute name, width in bits and kind
    (``bits``, ``signed`` or ``bool``)."""

    attr: str
    width: int
    kind: str  # "bits", "signed", "bool"


@dataclass
class _Chunk:
    """Fields that together fill ``nbytes`` whole bytes, and the ``struct`` parts (format
    code, bits) read for them; ``first_part`` is the index of the first in the header's format."""

    nbytes: int
    fields: list[_Field]
    parts: list[tuple[str, int]] = field(default_factory=list)  # (code, nbits)
    first_part: int = 0


def _field_kind(type_: t.Type) -> tuple[int, str]:
    base = t.underlying_scalar(type_)
    if isinstance(base, t.BoolType):
        return 1, "bool"
    if isinstance(base, t.BitsType):
        return base.width, "signed" if base.signed else "bits"
    raise CompileError(f"header field of type {type_.describe()} is not supported")


def _chunks(fields: list[_Field], header: str) -> list[_Chunk]:
    chunks: list[_Chunk] = []
    current: list[_Field] = []
    bits = 0
    for f in fields:
        current.append(f)
        bits += f.width
        if bits % 8 == 0:
            chunks.append(_Chunk(bits // 8, current))
            current, bits = [], 0
    if current:
        raise CompileError(
            f"header {header} is not a whole number of bytes; BMv2 cannot parse or deparse it"
        )
    return _plan(chunks)


def _plan(chunks: list[_Chunk]) -> list[_Chunk]:
    index = 0
    for chunk in chunks:
        remaining = chunk.nbytes
        chunk.first_part = index
        if _is_wide(chunk):  # one ``Ns`` part: its bytes, converted by ``int`` itself
            chunk.parts.append((f"{chunk.nbytes}s", chunk.nbytes * 8))
            index += 1
            continue
        while remaining:
            for size, code in _CODES:
                if size <= remaining:
                    chunk.parts.append((code, size * 8))
                    remaining -= size
                    index += 1
                    break
    return chunks


def _is_wide(chunk: _Chunk) -> bool:
    """A chunk that is one field wider than 64 bits (an IPv6 address, a SID): read and
    written as one ``Ns`` string part with ``int.from_bytes`` / ``int.to_bytes`` instead
    of 64-bit halves joined by ``(a << 64) | b`` and split by ``>> 64`` and ``& (2**64 -
    1)`` (each of those a new Python ``int``; the bytes are the same)."""
    return len(chunk.fields) == 1 and chunk.nbytes > WIDE_FIELD_BYTES


def _convert(expr: str, f: _Field) -> str:
    """Convert an unsigned extracted value to the field's representation."""
    if f.kind == "signed":
        half = 1 << (f.width - 1)
        return f"(({expr}) ^ {half}) - {half}"
    if f.kind == "bool":
        return f"({expr}) != 0"
    return expr


def _native_convert(expr: str, f: _Field) -> str:
    """:func:`_convert` of a C ``unsigned long long`` holding a field's bits: a signed
    field's two's complement on a C ``long long`` (in unsigned arithmetic ``- half``
    would wrap), ``int<64>`` the bits reinterpreted as they are."""
    if f.kind == "signed":
        signed = f"cython.cast(cython.longlong, {expr})"
        if f.width == 64:
            return signed
        half = 1 << (f.width - 1)
        return f"({signed} ^ {half}) - {half}"
    if f.kind == "bool":
        return f"({expr}) != 0"
    return expr


def _to_bits(expr: str, f: _Field) -> str:
    if f.kind == "signed":
        return f"({expr} & {(1 << f.width) - 1})"
    if f.kind == "bool":
        return f"(1 if {expr} else 0)"
    return expr


@dataclass
class HeaderCodec:
    """Extract/emit code for one fixed-size header type."""

    type_: t.HeaderType
    nbytes: int
    struct_format: str
    chunks: list[_Chunk]

    @property
    def wide(self) -> bool:
        """Whether a field is read with ``int.from_bytes`` (:func:`_is_wide`)."""
        return any(_is_wide(chunk) for chunk in self.chunks)

    def extract_lines(
        self,
        target: str,
        data: str,
        offset: str,
        struct_name: str,
        from_bytes: str = "int.from_bytes",
    ) -> list[str]:
        """Statements filling header object ``target`` from ``data`` at byte ``offset``
        (length already checked) and marking it valid; ``from_bytes``: the name of
        ``int.from_bytes`` (:data:`FROM_BYTES`) for a wide field's bytes."""
        lines: list[str] = []
        if len(self.chunks) == 1 and _is_wide(self.chunks[0]):  # the header is that field
            f = self.chunks[0].fields[0]
            raw = f"{data}[{offset}:{offset} + {self.nbytes}]"
            value = _convert(f"{from_bytes}({raw}, 'big')", f)
            return [f"{target}.{f.attr} = {value}", f"{target}.valid_ = True"]
        targets: list[str] = []
        post: list[str] = []
        tmp_count = 0

        def temporary(nbits: int) -> str:
            """A temporary holding ``nbits``-bit values: below 64 bits, named for its
            width and annotated ``cython.longlong`` (Python never evaluates a local's
            annotation; the native build's ``.pxd`` cimports ``cython``, and
            ``p4emu.backend.cfields`` checks every operation on it)."""
            nonlocal tmp_count
            tmp_count += 1
            if nbits > TYPED_TEMPORARY_BITS:
                return f"_x{tmp_count}"
            name = f"_u{nbits}_{tmp_count}"
            lines.append(f"{name}: cython.longlong")
            return name

        for chunk in self.chunks:
            if _is_wide(chunk):
                raw = temporary(chunk.nbytes * 8)  # an untyped object: the field's bytes
                targets.append(raw)
                value = f"{from_bytes}({raw}, 'big')"
                post.append(f"{target}.{chunk.fields[0].attr} = {_convert(value, chunk.fields[0])}")
                continue
            single_direct = (
                len(chunk.fields) == 1 and len(chunk.parts) == 1 and chunk.fields[0].kind == "bits"
            )
            if single_direct:
                targets.append(f"{target}.{chunk.fields[0].attr}")
                continue
            part_names = [temporary(nbits) for _code, nbits in chunk.parts]
            targets.extend(part_names)
            # combine parts into the chunk value
            value = part_names[0]
            consumed = chunk.parts[0][1]
            for name, (_code, nbits) in zip(part_names[1:], chunk.parts[1:]):
                if consumed > chunk.parts[0][1]:  # ``<<`` binds tighter than ``|``
                    value = f"({value})"
                value = f"({value} << {nbits}) | {name}"
                consumed += nbits
            if len(chunk.fields) == 1:
                post.append(f"{target}.{chunk.fields[0].attr} = {_convert(value, chunk.fields[0])}")
                continue
            if len(part_names) == 1:  # the chunk is one part: no combining
                cvar = part_names[0]
            else:
                cvar = temporary(chunk.nbytes * 8)
                post.append(f"{cvar} = {value}")
            shift = chunk.nbytes * 8
            for index, f in enumerate(chunk.fields):
                shift -= f.width
                expr = f"{cvar} >> {shift}" if shift else cvar
                if index:
                    expr = f"({expr}) & {(1 << f.width) - 1}"
                post.append(f"{target}.{f.attr} = {_convert(expr, f)}")
        lines.append(
            f"{', '.join(targets)}{',' if len(targets) == 1 else ''} = {struct_name}({data}, {offset})"
        )
        lines.extend(post)
        lines.append(f"{target}.valid_ = True")
        return lines

    def emit_expr(self, source: str, pack_name: str, to_bytes: str = "int.to_bytes") -> str:
        """Expression giving the bytes of header object ``source``; ``to_bytes``: the name
        of ``int.to_bytes`` (:data:`TO_BYTES`) for a wide field's value."""
        parts: list[str] = []
        for chunk in self.chunks:
            if _is_wide(chunk):
                bits = _to_bits(f"{source}.{chunk.fields[0].attr}", chunk.fields[0])
                parts.append(f"{to_bytes}({bits}, {chunk.nbytes}, 'big')")
                continue
            value = self._python_value(source, chunk)
            remaining = chunk.nbytes * 8
            for index, (_code, nbits) in enumerate(chunk.parts):
                remaining -= nbits
                piece = f"({value} >> {remaining})" if remaining else value
                if index:  # the first part is the chunk's top bits: in range already
                    piece = f"({piece} & {(1 << nbits) - 1})"
                parts.append(piece)
        if len(self.chunks) == 1 and _is_wide(self.chunks[0]):
            return parts[0]  # the header is that field: its bytes are the header's
        return f"{pack_name}({', '.join(parts)})"

    def native_emit_lines(self, source: str) -> list[str]:
        """Statements of the native deparser (a ``cython.compiled`` branch) writing the
        bytes of header object ``source`` into :data:`NATIVE_BUF` at :data:`NATIVE_LEN`
        and advancing it: a chunk of at most :data:`NATIVE_CHUNK_BYTES` bytes is one C
        ``unsigned long long`` (each field converted to it: a C field by a C cast, a
        Python ``int`` by Cython's conversion, which raises on a value outside 64 bits as
        ``pack`` would) written big-endian by ``P4_STORE_BE`` (one byte: stored); a
        wider chunk's Python value
        is written by ``P4_INT_TO_BE`` (:data:`NATIVE_PXD`). The bytes are those of
        :meth:`emit_expr`."""
        lines: list[str] = []
        at = 0
        for chunk in self.chunks:
            dest = f"cython.address({NATIVE_BUF}[{NATIVE_LEN} + {at}])"
            if chunk.nbytes > NATIVE_CHUNK_BYTES:
                lines.append(
                    f"P4_INT_TO_BE({self._python_value(source, chunk)}, {dest}, {chunk.nbytes})"
                )
                at += chunk.nbytes
                continue
            terms = []
            shift = chunk.nbytes * 8
            for f in chunk.fields:
                shift -= f.width
                bits = f"cython.cast(cython.ulonglong, {_to_bits(f'{source}.{f.attr}', f)})"
                terms.append(f"({bits} << {shift})" if shift else bits)
            lines.append(f"{NATIVE_CHUNK} = {' | '.join(terms)}")
            if chunk.nbytes == 1:
                lines.append(
                    f"{NATIVE_BUF}[{NATIVE_LEN} + {at}] = cython.cast(cython.uchar, {NATIVE_CHUNK})"
                )
            else:  # its low nbytes bytes, big-endian (NATIVE_PXD)
                lines.append(f"P4_STORE_BE({dest}, {NATIVE_CHUNK}, {chunk.nbytes})")
            at += chunk.nbytes
        lines.append(f"{NATIVE_LEN} += {self.nbytes}")
        return lines

    def native_extract_lines(self, target: str) -> list[str]:
        """Statements of the native parser (a ``cython.compiled`` branch) filling header
        object ``target`` from :data:`NATIVE_DATA` (the packet's bytes) at ``off`` (its
        length checked) and marking it valid, as :meth:`extract_lines` does: a chunk of
        at most :data:`NATIVE_CHUNK_BYTES` bytes read into one C ``unsigned long long``
        by ``P4_LOAD_BE`` (big-endian; one byte: read), its fields shifted and masked in C (a signed field's two's
        complement taken on a C ``long long``; a field Cython holds as a Python object
        gets the C value converted); a wider chunk's value made by ``P4_INT_FROM_BE``
        (:data:`NATIVE_PXD`), its fields split as Python ints."""
        lines = [f"{NATIVE_AT} = off"]
        at = 0
        for chunk in self.chunks:
            source = f"cython.address({NATIVE_DATA}[{NATIVE_AT} + {at}])"
            if chunk.nbytes > NATIVE_CHUNK_BYTES:
                value = f"P4_INT_FROM_BE({source}, {chunk.nbytes})"
                if len(chunk.fields) == 1:
                    f = chunk.fields[0]
                    lines.append(f"{target}.{f.attr} = {_convert(value, f)}")
                else:
                    lines.append(f"{NATIVE_WIDE} = {value}")
                    shift = chunk.nbytes * 8
                    for f in chunk.fields:
                        shift -= f.width
                        piece = f"({NATIVE_WIDE} >> {shift}) & {(1 << f.width) - 1}"
                        lines.append(f"{target}.{f.attr} = {_convert(piece, f)}")
                at += chunk.nbytes
                continue
            if chunk.nbytes == 1:
                byte = f"cython.cast(cython.ulonglong, {NATIVE_DATA}[{NATIVE_AT} + {at}])"
                lines.append(f"{NATIVE_CHUNK} = {byte}")
            else:  # nbytes bytes, big-endian (NATIVE_PXD)
                lines.append(f"{NATIVE_CHUNK} = P4_LOAD_BE({source}, {chunk.nbytes})")
            shift = chunk.nbytes * 8
            for f in chunk.fields:
                shift -= f.width
                piece = f"{NATIVE_CHUNK} >> {shift}" if shift else NATIVE_CHUNK
                if f.width < chunk.nbytes * 8:
                    piece = f"({piece}) & {(1 << f.width) - 1}"
                lines.append(f"{target}.{f.attr} = {_native_convert(piece, f)}")
            at += chunk.nbytes
        lines.append(f"{target}.valid_ = True")
        return lines

    @staticmethod
    def _python_value(source: str, chunk: _Chunk) -> str:
        """The Python ``int`` of a chunk's bits (its fields shifted and or-ed)."""
        if len(chunk.fields) == 1:
            return _to_bits(f"{source}.{chunk.fields[0].attr}", chunk.fields[0])
        terms = []
        shift = chunk.nbytes * 8
        for f in chunk.fields:
            shift -= f.width
            bits = _to_bits(f"{source}.{f.attr}", f)
            terms.append(f"({bits} << {shift})" if shift else bits)
        return "(" + " | ".join(terms) + ")"


def native_deparse_locals(nbytes: int) -> list[str]:
    """The native deparser's C locals (annotations: Python never evaluates them): a
    buffer of ``nbytes`` bytes, the most the deparser's ``emit`` statements can write
    (each counted once per place in the text, a stack for all its elements, a varbit
    header at its maximum: a control has no loop), the count written, a chunk, where
    the payload starts in the packet."""
    return [
        f"{NATIVE_BUF}: cython.uchar[{max(nbytes, 1)}]",
        f"{NATIVE_LEN}: cython.Py_ssize_t = 0",
        f"{NATIVE_CHUNK}: cython.ulonglong",
        f"{NATIVE_PAYLOAD_AT}: cython.Py_ssize_t",
    ]


def native_parse_prologue() -> list[str]:
    """The start of the parser: its C locals, and (native) the packet's bytes as a C
    pointer (a packet given as another buffer is copied into ``bytes`` first)."""
    return [
        f"{NATIVE_DATA}: cython.p_uchar",
        f"{NATIVE_AT}: cython.Py_ssize_t",
        f"{NATIVE_CHUNK}: cython.ulonglong",
        "if cython.compiled:",
        "    if not isinstance(data, bytes):",
        "        data = bytes(data)",
        f"    {NATIVE_DATA} = cython.cast(cython.p_uchar, PyBytes_AS_STRING(data))",
    ]


def native_deparse_return() -> list[str]:
    """The end of the deparser: the finished packet, the emitted headers then the
    payload. Native: one ``bytes`` made at its length, the headers' bytes and the
    payload's copied in; pure: the list of emitted headers and the payload joined."""
    payload, frame, at = NATIVE_PAYLOAD, NATIVE_FRAME, NATIVE_PAYLOAD_AT
    return [
        "if cython.compiled:",  # the payload copied once, from the packet as it came in
        f"    {payload} = ctx.packet",
        f"    {at} = ctx.payload_at",
        f"    {frame} = PyBytes_FromStringAndSize(cython.NULL, {NATIVE_LEN} + len({payload}) - {at})",
        f"    memcpy(PyBytes_AS_STRING({frame}), {NATIVE_BUF}, {NATIVE_LEN})",
        f"    memcpy(PyBytes_AS_STRING({frame}) + {NATIVE_LEN}, PyBytes_AS_STRING({payload}) + {at}, "
        f"len({payload}) - {at})",
        f"    return {frame}",
        "out.append(ctx.payload)",
        'return b"".join(out)',
    ]


def native_emit_bytes_lines(value: str) -> list[str]:
    """Native deparser statements copying the ``bytes`` of ``value`` (a varbit header's,
    from its generated ``emit_vl_`` helper) into the buffer."""
    payload = NATIVE_PAYLOAD
    return [
        f"{payload} = {value}",
        f"memcpy(cython.address({NATIVE_BUF}[{NATIVE_LEN}]), PyBytes_AS_STRING({payload}), "
        f"len({payload}))",
        f"{NATIVE_LEN} += len({payload})",
    ]


def header_codec(type_: t.HeaderType) -> HeaderCodec:
    try:
        return _header_codec(type_)
    except CompileError as error:
        loc = getattr(type_.decl, "loc", None)
        if loc is None or error.file:
            raise
        raise CompileError(error.message, loc.file, loc.line, loc.column) from None


def _header_codec(type_: t.HeaderType) -> HeaderCodec:
    fields = []
    splits = split_fields((py_attr(info.name), info.type) for info in type_.fields)
    for info in type_.fields:
        width, kind = _field_kind(info.type)
        split = splits.get(py_attr(info.name))
        if split is not None:  # its halves: two fields of the chunks (p4emu.backend.wide)
            fields.append(_Field(split.hi, split.hi_bits, kind))
            fields.append(_Field(split.lo, HALF_BITS, kind))
            continue
        fields.append(_Field(py_attr(info.name), width, kind))
    if not fields:
        raise CompileError(f"header {type_.name} has no field")
    chunks = _chunks(fields, type_.name)
    fmt = ">" + "".join(code for chunk in chunks for code, _ in chunk.parts)
    struct.Struct(fmt)  # validate
    return HeaderCodec(type_, sum(c.nbytes for c in chunks), fmt, chunks)


def varbit_helpers(type_: t.HeaderType, cls: str) -> tuple[list[str], int, int]:
    """Source of ``extract_vl_<cls>(h, data, off, vl_bits)`` and ``emit_vl_<cls>(h)`` for a
    header with one varbit field; returns (lines, fixed bits, varbit max bits)."""
    fixed = []
    var_index = -1
    var_max = 0
    for index, info in enumerate(type_.fields):
        if isinstance(info.type, t.VarbitType):
            var_index = index
            var_max = info.type.max_width
            fixed.append(None)
        else:
            width, kind = _field_kind(info.type)
            fixed.append(_Field(py_attr(info.name), width, kind))
    fixed_bits = sum(f.width for f in fixed if f is not None)
    var_attr = py_attr(type_.fields[var_index].name)
    lines = [f"def extract_vl_{cls}(h, data, off, vl):"]
    lines.append(f"    total = {fixed_bits} + vl")
    lines.append("    nbytes = total >> 3")
    lines.append("    v = int.from_bytes(data[off:off + nbytes], 'big')")
    lines.append("    shift = nbytes * 8")
    for f in fixed:
        if f is None:
            lines.append("    shift -= vl")
            lines.append(f"    h.{var_attr} = (vl, (v >> shift) & ((1 << vl) - 1))")
        else:
            lines.append(f"    shift -= {f.width}")
            lines.append(f"    h.{f.attr} = {_convert(f'(v >> shift) & {(1 << f.width) - 1}', f)}")
    lines.append("    h.valid_ = True")
    lines.append("    return nbytes")
    lines.append("")
    lines.append(f"def emit_vl_{cls}(h):")
    lines.append("    acc = 0")
    lines.append("    n = 0")
    for f in fixed:
        if f is None:
            lines.append(f"    vl, vv = h.{var_attr}")
            lines.append("    acc = (acc << vl) | vv")
            lines.append("    n += vl")
        else:
            lines.append(f"    acc = (acc << {f.width}) | {_to_bits(f'h.{f.attr}', f)}")
            lines.append(f"    n += {f.width}")
    lines.append("    pad = -n & 7")
    lines.append("    return (acc << pad).to_bytes((n + pad) >> 3, 'big')")
    lines.append("")
    return lines, fixed_bits, var_max
