# Cython declarations for mrc_wire/codec.py (pure-Python mode; docs/virtual-fabric.md,
# "Typed declarations: the NIC's wire codecs"): read only by the native build, the .py
# stays the reference. The messages become extension types that stay dataclasses (Cython
# compiles the .py's keyword-only ``@dataclass``: the same __init__, __eq__, __repr__ and
# dataclasses.fields / replace / asdict): their fields are declared here in the .py's
# order (a dataclass's field order is its declarations'), every one a Python object, so
# a field holds what it is given as on the pure path (an out-of-range value is refused by
# the encoder, with EncodeError, not by the assignment). The codec reads and writes them
# as C struct fields. C integers hold what is read from a frame (at most 32 bits),
# offsets and lengths, and the codec's own constants; a field's value that may be wider
# (a RETH's 64-bit VA, a SACK bitmap) stays a Python int.
cimport cython
from cpython.object cimport PyObject
from libc.stdint cimport uint32_t


cdef class Envelope:
    cdef public object dst_mac
    cdef public object src_mac
    cdef public object outer_src
    cdef public object outer_dst
    cdef public object inner_src
    cdef public object inner_dst
    cdef public object ev
    cdef public object hop_limit
    cdef public object segments
    cdef public object segments_left
    cdef public object dqpn


cdef class DataPacket(Envelope):
    cdef public object dscp
    cdef public object ecn
    cdef public object opcode
    cdef public object psn
    cdef public object va
    cdef public object rkey
    cdef public object dma_length
    cdef public object rtx
    cdef public object ack_req
    cdef public object last
    cdef public object timestamp
    cdef public object immediate
    cdef public object payload


cdef class Sack(Envelope):
    cdef public object dscp
    cdef public object ecn
    cdef public object cum_psn
    cdef public object sack_offset
    cdef public object bitmap
    cdef public object echoed_ev
    cdef public object echoed_psn
    cdef public object echoed_ts
    cdef public object rcvd_bytes
    cdef public object ecn_echo
    cdef public object always_skip
    cdef public object probe_reply
    cdef public object port_status
    cdef public object rcv_cwnd_pen
    cdef public object ooo_count


cdef class Nack(Envelope):
    cdef public object dscp
    cdef public object ecn
    cdef public object cum_psn
    cdef public object nack_psn
    cdef public object reason
    cdef public object echoed_ev
    cdef public object echoed_ts
    cdef public object ecn_echo
    cdef public object port_status


cdef class Probe(Envelope):
    cdef public object dscp
    cdef public object ecn
    cdef public object psn
    cdef public object reply
    cdef public object probe_id
    cdef public object probe_ev
    cdef public object timestamp
    cdef public object port_status


# the codec's constants: C values (not module attributes on the native path)
cdef object _unpack_eth_ip6, _unpack_ip6_udp_bth, _unpack_reth, _unpack_sack
cdef object _unpack_nack, _unpack_probe, _pack_head
cdef Py_ssize_t _OUTER_END, _INNER_TO_BTH_END, _HEAD_LEN
cdef long long _IPV6_VERSION_BITS, _MAX_IPV6_PAYLOAD, _BTH_VERSION_MASK
cdef long long _BTH_FLAG_RTX, _BTH_FLAG_TS, _BTH_FLAG_LAST
cdef long long _OP_WRITE, _OP_WRITE_IMM, _OP_SACK, _OP_NACK, _OP_PROBE
cdef long long _SACK_ECN_ECHO, _SACK_ALWAYS_SKIP, _SACK_TS_VALID, _SACK_PROBE_REPLY
cdef long long _NACK_ECN_ECHO, _NACK_TS_VALID, _PROBE_REPLY
cdef long long _DSCP_TRIMMED, _DSCP_TRIMMED_LASTHOP, _MAX_SRH_SIDS
cdef long long _ETHERTYPE, _IPPROTO_IPV6, _IPPROTO_UDP, _UDP_PORT, _INNER_HOP, _UDP_CSUM
cdef long long _MAC_LEN, _IPV6_LEN, _UDP_LEN, _BTH_VERSION, _TSETH_LEN, _RETH_LEN
cdef long long _IMMDT_LEN, _SACK_LEN, _PSN_MASK, _QPN_MASK, _BTH_LEN, _BTH_PKEY, _EV_MASK
cdef unsigned long long _LOW32


cdef object _check_envelope(Envelope m, object dscp, object ecn)
@cython.locals(ev=object, udp_len=Py_ssize_t, vtcfl=object, nsids=Py_ssize_t)
cdef bytes _wrap(Envelope m, object dscp, object ecn, bytes transport, object payload)
# The native build's frame without an SRH: allocated once, its headers written in place.
cdef bint _native_frame(Envelope m, object dscp, object ecn, object payload) except -1
@cython.locals(out=bytes, b="unsigned char*")
cdef bytes _wrap_native(Envelope m, long long dscp, long long ecn, bytes transport,
                        bytes payload)
@cython.locals(udp_len=Py_ssize_t, ev="long long", vtcfl="long long", out=bytes,
               b="unsigned char*")
cdef bytes _head_native(Envelope m, long long dscp, long long ecn, Py_ssize_t transport_len,
                        bytes payload)
# 0 <= value <= limit: an exact int read in C (mrc_int_in_range), anything else by
# _in_range_any. Inline, and small enough for the C compiler to inline it: each encode
# checks a dozen fields.
@cython.locals(found=int)
cdef inline bint _in_range(object value, unsigned long long limit) except -1
# an int subclass that compares as int and fits a long long in C, anything else by Python
@cython.locals(overflow=int, small="long long")
cdef bint _in_range_any(object value, unsigned long long limit) except -1
# An exact int's 0 <= v <= limit in C: 1 or 0, or -1 when it does not fit a long long (the
# caller then compares by Python). Its digits read directly where it has one or two (the
# usual field; on 3.12 and later, the compact form's value), inline; any other value by
# PyLong_AsLongLongAndOverflow, in a function of its own (mrc_int_in_range_wide), which
# keeps the inline part small. docs/virtual-fabric.md, "NIC per packet, round 10".
cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    __attribute__((noinline))
    #endif
    static int mrc_int_in_range_wide(PyObject *v, unsigned long long limit) {
        int overflow = 0;
        long long small = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow) return -1;
        return small >= 0 && (unsigned long long)small <= limit;
    }
    static CYTHON_INLINE int mrc_int_in_range(PyObject *v, unsigned long long limit) {
    #if PY_VERSION_HEX >= 0x030C0000
        if (PyUnstable_Long_IsCompact((PyLongObject *)v)) {
            Py_ssize_t c = PyUnstable_Long_CompactValue((PyLongObject *)v);
            return c >= 0 && (unsigned long long)c <= limit;
        }
    #else
        Py_ssize_t size = Py_SIZE(v);
        const digit *d = ((PyLongObject *)v)->ob_digit;
        if (size == 0) return 1;
        if (size == 1) return (unsigned long long)d[0] <= limit;
        if (size == 2)
            return (((unsigned long long)d[1] << PyLong_SHIFT) | d[0]) <= limit;
        if (size < 0) return 0;
    #endif
        return mrc_int_in_range_wide(v, limit);
    }
    """
    int mrc_int_in_range(object v, unsigned long long limit) noexcept
# An exact int's value read in C from its digits where it has at most two (on 3.12 and
# later, the compact form's): 1 with *out set, else 0 (the caller reads it another way).
# Inline.
cdef extern from *:
    """
    static CYTHON_INLINE int mrc_int_value(PyObject *v, long long *out) {
    #if PY_VERSION_HEX >= 0x030C0000
        if (PyUnstable_Long_IsCompact((PyLongObject *)v)) {
            *out = PyUnstable_Long_CompactValue((PyLongObject *)v);
            return 1;
        }
        return 0;
    #else
        Py_ssize_t size = Py_SIZE(v);
        const digit *d = ((PyLongObject *)v)->ob_digit;
        switch (size) {
        case 0: *out = 0; return 1;
        case 1: *out = (long long)d[0]; return 1;
        case -1: *out = -(long long)d[0]; return 1;
        case 2: *out = (long long)(((unsigned long long)d[1] << PyLong_SHIFT) | d[0]); return 1;
        default: return 0;
        }
    #endif
    }
    """
    int mrc_int_value(object v, long long* out) noexcept
# An exact int's value from 0 to 2**64 - 1 read in C from its digits where it has at most
# three (on 3.12 and later, the compact form's): 1 with *out set, else 0. Inline.
cdef extern from *:
    """
    static CYTHON_INLINE int mrc_int_u64(PyObject *v, unsigned long long *out) {
    #if PY_VERSION_HEX >= 0x030C0000
        if (PyUnstable_Long_IsCompact((PyLongObject *)v)) {
            Py_ssize_t c = PyUnstable_Long_CompactValue((PyLongObject *)v);
            if (c < 0) return 0;
            *out = (unsigned long long)c;
            return 1;
        }
        return 0;
    #else
        Py_ssize_t size = Py_SIZE(v);
        const digit *d = ((PyLongObject *)v)->ob_digit;
        unsigned long long x = 0;
        if (size < 0 || size > 3) return 0;
        if (size == 3 && ((unsigned long long)d[2] >> (64 - 2 * PyLong_SHIFT))) return 0;
        while (size > 0) {
            size--;
            x = (x << PyLong_SHIFT) | d[size];
        }
        *out = x;
        return 1;
    #endif
    }
    """
    int mrc_int_u64(object v, unsigned long long* out) noexcept
# The usual envelope of a frame the native writers make, read in C with no reference taken
# (an attribute passed to a Cython function is held by a new reference for the call):
# every address an exact bytes of its size, no SRH (segments the empty tuple,
# segments_left an exact 0) and the payload bytes (mrc_envelope_usual); an int that
# compares as int does (exact, bool, an IntEnum), 0 <= v <= limit (mrc_int_within, its
# digits read as mrc_int_in_range reads them). 1 when it holds, 0 otherwise (the caller's
# own checks then decide). Inline.
cdef extern from *:
    """
    static CYTHON_INLINE int mrc_bytes_sized(PyObject *v, Py_ssize_t size) {
        return PyBytes_CheckExact(v) && PyBytes_GET_SIZE(v) == size;
    }
    static CYTHON_INLINE int mrc_int_within(PyObject *v, unsigned long long limit) {
        if (!PyLong_CheckExact(v)
            && !(PyLong_Check(v) && Py_TYPE(v)->tp_richcompare == PyLong_Type.tp_richcompare))
            return 0;
        return mrc_int_in_range(v, limit) == 1;
    }
    static CYTHON_INLINE int mrc_envelope_usual(
            PyObject *dst_mac, PyObject *src_mac, PyObject *outer_src, PyObject *outer_dst,
            PyObject *inner_src, PyObject *inner_dst, PyObject *segments,
            PyObject *segments_left, PyObject *payload) {
        long long left = -1;
        return mrc_bytes_sized(dst_mac, 6) && mrc_bytes_sized(src_mac, 6)
            && mrc_bytes_sized(outer_src, 16) && mrc_bytes_sized(outer_dst, 16)
            && mrc_bytes_sized(inner_src, 16) && mrc_bytes_sized(inner_dst, 16)
            && PyTuple_CheckExact(segments) && PyTuple_GET_SIZE(segments) == 0
            && PyLong_CheckExact(segments_left) && mrc_int_value(segments_left, &left)
            && left == 0 && PyBytes_CheckExact(payload);
    }
    """
    int mrc_int_within(PyObject* v, unsigned long long limit) noexcept
    int mrc_envelope_usual(
        PyObject* dst_mac, PyObject* src_mac, PyObject* outer_src, PyObject* outer_dst,
        PyObject* inner_src, PyObject* inner_dst, PyObject* segments,
        PyObject* segments_left, PyObject* payload,
    ) noexcept
# _native_frame and _check_native both pass when this is True (every value read in C, no
# reference taken); False: they run and decide, as before
cdef bint _envelope_usual(Envelope m, object dscp, object ecn, object payload) noexcept
# value as a C long long into *out when it is an int that compares as int does (exact,
# bool, an IntEnum) and fits: True; anything else False (the caller compares by Python)
cdef inline bint _as_c_int(object value, long long* out) except -1
@cython.locals(overflow=int)
cdef bint _as_c_int_any(object value, long long* out) except -1
cdef inline bint _as_c_u32(object value, long long* out) except -1
# an exact int from 0 to 2**64 - 1 into *out (mrc_int_u64): True; anything else False
cdef inline bint _as_c_u64(object value, unsigned long long* out) except -1
# encode_data's opcode, trimmed and length rules read in C: True when they hold for
# values read so (False: the reference's checks run, and raise or pass as they do)
@cython.locals(opcode="long long", dscp="long long", dma_length="long long", payload=object,
               size=Py_ssize_t)
cdef bint _data_rules_hold(DataPacket p) except -1
# the decoder's int object for a value read from a frame (0 <= value < 2**32): the one
# made for it before while its slot still holds it, else a new one kept there
@cython.locals(slot=Py_ssize_t, cached="PyObject*", found=object, held="long long")
cdef object _int_object(long long value)
cdef list _ints
# _check_envelope of a message _native_frame accepted (its addresses bytes, no SRH)
@cython.locals(segments_left="long long")
cdef object _check_native(Envelope m, object dscp, object ecn)
# The native build's data and SACK frames (None: struct packs them, as the reference).
@cython.locals(timestamp=object, immediate=object, size=Py_ssize_t, out=bytes,
               b="unsigned char*", off=Py_ssize_t, op="long long", dqpn="long long",
               psn="long long", va="unsigned long long", rkey="long long",
               dma_length="long long", ts="long long", imm="long long", usual=bint)
cdef object _data_native(DataPacket p, object opcode, long long flags, object psn_word)
@cython.locals(echoed_ts=object, out=bytes, b="unsigned char*", off=Py_ssize_t,
               dqpn="long long", cum_psn="long long", port_status="long long",
               sack_offset="long long", bitmap="unsigned long long", echoed_ev="long long",
               ts="long long", rcvd="long long", echoed_psn="long long", pen="long long",
               ooo="long long", usual=bint)
cdef object _sack_native(Sack s, long long flags)
cdef inline void _put16(unsigned char* b, Py_ssize_t off, long long value) noexcept
cdef inline void _put32(unsigned char* b, Py_ssize_t off, long long value) noexcept
cdef inline void _put_bth(unsigned char* b, Py_ssize_t off, long long opcode, long long flags,
                          long long dqpn, long long psn_word) noexcept
cdef inline void _put64(unsigned char* b, Py_ssize_t off, unsigned long long value) noexcept

@cython.locals(opcode=object, trimmed=bint, flags="long long", psn_word=object, head=bytes,
               frame=object)
cpdef bytes encode_data(DataPacket p)
@cython.locals(flags="long long", body=bytes, frame=object)
cpdef bytes encode_sack(Sack s)
@cython.locals(flags="long long", body=bytes)
cpdef bytes encode_nack(Nack n)
@cython.locals(body=bytes)
cpdef bytes encode_probe(Probe p)

@cython.locals(found=object)
cpdef object decode(object frame)
@cython.locals(
    n=Py_ssize_t, off=Py_ssize_t, rest=Py_ssize_t, ethertype="long long", vtcfl="long long",
    plen=Py_ssize_t, nh="long long", ivtcfl="long long", iplen=Py_ssize_t, inh="long long",
    sport="long long", dport="long long", ulen=Py_ssize_t, opcode="long long", bflags="long long",
    dqpn_word="long long", psn_word="long long", dscp="long long", ecn="long long", ev="long long",
    dqpn="long long", message=Envelope,
)
cdef object _decode(object frame)
cdef _set_envelope(
    Envelope message, object dst_mac, object src_mac, object osrc, object odst, object isrc,
    object idst, object ev, object hop, tuple segments, object seg_left,
)
# The native build's decode of the usual frame, read in place (C integers: at most 64 bits
# unsigned, as on the wire).
@cython.locals(
    n=Py_ssize_t, b="const unsigned char*", vtcfl="long long", iplen=Py_ssize_t,
    bflags="long long", off=Py_ssize_t, rest=Py_ssize_t, opcode="long long",
    psn_word="long long", dscp="long long", ecn="long long", timestamp=object,
    va="unsigned long long", rkey="long long", dma_length=Py_ssize_t, immediate=object,
    payload=object, sflags="long long", pen_psn="long long", sack=Sack, message=Envelope,
)
cdef object _decode_native(bytes frame)
@cython.locals(outer_src=bytes, inner_src=bytes)
cdef _envelope_native(Envelope message, bytes frame, const unsigned char* b, long long vtcfl)
cdef Py_ssize_t _ADDRESS_SLOTS
cdef list _addresses
cdef unsigned long long _ADDRESS_MIX
cdef int _ADDRESS_SLOT_SHIFT64
# the address at b + off, 6 or 16 bytes: its words read and compared in C (inline, fixed
# sizes: no loop, no memcmp call); _address_new when the slot holds another
@cython.locals(lo=uint32_t, hi="unsigned short", slot=Py_ssize_t, found=bytes,
               f="const unsigned char*", flo=uint32_t, fhi="unsigned short")
cdef inline bytes _address6(bytes frame, const unsigned char* b, Py_ssize_t off)
@cython.locals(w0="unsigned long long", w1="unsigned long long", slot=Py_ssize_t, found=bytes,
               f="const unsigned char*", f0="unsigned long long", f1="unsigned long long")
cdef inline bytes _address16(bytes frame, const unsigned char* b, Py_ssize_t off)
@cython.locals(found=bytes, old="PyObject*")
cdef bytes _address_new(bytes frame, Py_ssize_t off, Py_ssize_t size, Py_ssize_t slot)
@cython.locals(value="long long")
cdef inline long long _get16(const unsigned char* b, Py_ssize_t off) noexcept
@cython.locals(value="long long")
cdef inline long long _get32(const unsigned char* b, Py_ssize_t off) noexcept
@cython.locals(value="unsigned long long")
cdef inline unsigned long long _get64(const unsigned char* b, Py_ssize_t off) noexcept
@cython.locals(timestamp=object, immediate=object, payload=object)
cdef DataPacket _decode_data(
    object frame, Py_ssize_t off, Py_ssize_t rest, long long opcode, long long bflags,
    long long psn_word, long long dscp, long long ecn,
)
@cython.locals(packet=DataPacket)
cdef DataPacket _new_data(
    long long opcode, long long bflags, long long psn_word, long long dscp, long long ecn,
    object va, object rkey, object dma_length, object timestamp, object immediate,
    object payload,
)
@cython.locals(sflags="long long", pen_psn="long long", sack=Sack)
cdef Sack _decode_sack(
    object frame, Py_ssize_t off, Py_ssize_t rest, long long psn_word, long long dscp,
    long long ecn,
)
@cython.locals(nflags="long long", nack_word="long long", nack=Nack)
cdef Nack _decode_nack(
    object frame, Py_ssize_t off, Py_ssize_t rest, long long psn_word, long long dscp,
    long long ecn,
)
@cython.locals(pflags="long long", probe=Probe)
cdef Probe _decode_probe(
    object frame, Py_ssize_t off, Py_ssize_t rest, long long psn_word, long long dscp,
    long long ecn,
)
cdef object _expect_length(str kind, Py_ssize_t rest, Py_ssize_t size)
