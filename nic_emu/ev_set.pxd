# Cython declarations for nic_emu/ev_set.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# EvEntry and EvSet become extension types, every attribute declared here (an attribute
# added to the .py must be added here too: the native build refuses to set an undeclared
# one). C integers hold counts (packets, bytes, probes, state changes), send and probe
# times (the driver's ns, below 2**63), probe ids and planes and ring positions; an EV,
# its path, its state (an EvState compared by identity) and a time that adds a configured
# value (``skip_until``: a config may give a float) stay Python objects. EvEntry is not
# tracked by the cycle collector: ``@cython.no_gc`` on the class in ev_set.py (Cython
# ignores the directive here), whose comment says why no cycle can pass through an entry.
cimport cython
from cpython.object cimport PyObject
from libc.stdint cimport uint32_t

# random.Random's C object as CPython 3.11 lays it out (Modules/_randommodule.c's
# RandomObject, which no header declares): the index of the next of MT19937's 624 words,
# then the words. ev_set.py uses it only after checking it (``_layout_ok``: the type's
# size, and draws across a twist compared with getrandbits'); the twist and tempering are
# mtbytes.pxd's, cimported by ev_set.py alone (not here: every module that cimports this
# file would carry mtbytes' C). A list's items, to swap two without touching their
# reference counts.
cdef extern from *:
    """
    #include <stdint.h>
    typedef struct {
        PyObject_HEAD
        int index;
        uint32_t state[624];
    } nic_ev_random;
    #define nic_ev_random_size ((Py_ssize_t)sizeof(nic_ev_random))
    static CYTHON_INLINE int *nic_ev_random_index(PyObject *r) {
        return &((nic_ev_random *)r)->index;
    }
    static CYTHON_INLINE uint32_t *nic_ev_random_words(PyObject *r) {
        return ((nic_ev_random *)r)->state;
    }
    static CYTHON_INLINE PyObject **nic_ev_items(PyObject *x) {
        return ((PyListObject *)x)->ob_item;
    }
    """
    const Py_ssize_t nic_ev_random_size
    int *nic_ev_random_index(object r) noexcept
    uint32_t *nic_ev_random_words(object r) noexcept
    PyObject **nic_ev_items(list x) noexcept

cdef object _RANDOM
# the states pick and its scan test, as C globals (no module dictionary read per test)
cdef object _GOOD, _SKIP


# The comparisons of the ports' free times with ``now`` and with each other (EvSet.pick):
# two exact ints of at most two 30-bit digits (below 2**60 in magnitude: the driver's ns)
# compared from their digits on CPython 3.11; anything else (a float, a larger int,
# another Python) by PyObject_RichCompareBool with the same operator, so the answer and
# its errors are Python's (-1: raised). ``op`` is Py_GT, Py_LE or Py_GE.
cdef extern from *:
    """
    static CYTHON_INLINE int nic_ev_small(PyObject *v, long long *out) {
    #if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_LIMITED_API) && PyLong_SHIFT == 30
        if (PyLong_CheckExact(v)) {
            const digit *d = ((PyLongObject *)v)->ob_digit;
            switch (Py_SIZE(v)) {
            case 0: *out = 0; return 1;
            case 1: *out = (long long)d[0]; return 1;
            case -1: *out = -(long long)d[0]; return 1;
            case 2: *out = ((long long)d[1] << 30) | (long long)d[0]; return 1;
            case -2: *out = -(((long long)d[1] << 30) | (long long)d[0]); return 1;
            default: break;
            }
        }
    #endif
        return 0;
    }
    static CYTHON_INLINE int nic_ev_cmp(PyObject *a, PyObject *b, int op) {
        long long x, y;
        if (nic_ev_small(a, &x) && nic_ev_small(b, &y)) {
            switch (op) {
            case Py_GT: return x > y;
            case Py_LE: return x <= y;
            case Py_GE: return x >= y;
            default: break;
            }
        }
        return PyObject_RichCompareBool(a, b, op);
    }
    """
    int nic_ev_cmp(object a, object b, int op) except -1

# an empty dict made at the size n keys need (CPython's C API); EvSet.__init__'s by_ev
cdef extern from "Python.h":
    dict nic_ev_presized "_PyDict_NewPresized" (Py_ssize_t minused)

cdef bint _gt(object a, object b) except -1
cdef bint _le(object a, object b) except -1
cdef bint _ge(object a, object b) except -1
cdef dict _dict_for(Py_ssize_t n)


@cython.locals(i=Py_ssize_t, n=Py_ssize_t, k=Py_ssize_t, b=Py_ssize_t, j=Py_ssize_t)
cpdef shuffle(object rng, list x)
@cython.locals(
    words="uint32_t *", index="int *", items="PyObject **", item="PyObject *",
    i=Py_ssize_t, j=Py_ssize_t, n=uint32_t, k=int, b=uint32_t,
)
cdef void _c_shuffle(object rng, list x) noexcept
@cython.locals(k=int, j=uint32_t, index="int *", words="uint32_t *")
cdef uint32_t _c_below(object rng, uint32_t n, int k) noexcept


cdef class EvEntry:
    cdef public object ev
    cdef public Py_ssize_t plane
    cdef public object path
    cdef public object state
    cdef public bint active
    cdef public object skip_until
    cdef public long long probe_seq
    cdef public long long probe_successes
    cdef public long long probed_ns
    cdef public long long acked_sent_ns
    cdef public object wire
    cdef public long long tx_packets
    cdef public long long tx_bytes
    cdef public long long acked_packets
    cdef public long long ecn_marks
    cdef public long long nacks
    cdef public long long losses
    cdef public long long probes_sent
    cdef public long long probes_ok
    cdef public long long first_tx_ns
    cdef public long long last_tx_ns
    cdef public long long state_changes


@cython.locals(t1s=Py_ssize_t, j=Py_ssize_t, e=EvEntry, out=list)
cpdef list plane_entries(object plane, tuple evs, list routes)
@cython.locals(e=EvEntry)
cdef EvEntry _new_entry(object ev, Py_ssize_t plane, object path, object wire)


# no subclass: its methods' C calls are direct (not through the vtable, no check for a
# Python override at each call: pick's scan and take, the connection parts' picks)
@cython.final
cdef class EvSet:
    cdef public list planes
    cdef public object min_active
    cdef public object skip_ns
    cdef public object _rng
    cdef public object _on_change
    cdef public object _on_floor_hold
    cdef public object _on_path_retired
    cdef public object _on_path_loss
    cdef public dict by_ev
    cdef public dict backup
    cdef public set local_down
    cdef public set remote_down
    cdef public list ring
    cdef public list _slots
    cdef public list _ppos
    cdef public Py_ssize_t _turn
    cdef public Py_ssize_t _undo_k
    cdef public Py_ssize_t _undo_pos
    cdef public Py_ssize_t _undo_turn
    cdef public long long bad_count
    cdef public dict by_path
    cdef public dict _undelivered
    cdef public dict quarantined

    @cython.locals(
        planes=list, n=Py_ssize_t, start=Py_ssize_t, k=Py_ssize_t, pos=Py_ssize_t, p=Py_ssize_t,
        i=Py_ssize_t, busy=bint, wait_k=Py_ssize_t, wait_i=Py_ssize_t, best=EvEntry,
        e=EvEntry, held=dict,
    )
    cpdef EvEntry pick(self, object now, list free_at=*)
    @cython.locals(
        ring=list, slots=list, m=Py_ssize_t, i=Py_ssize_t, _=Py_ssize_t, held=dict,
        e=EvEntry, slot=Py_ssize_t,
    )
    cpdef Py_ssize_t _scan(self, Py_ssize_t pos, object now) except? -2
    @cython.locals(e=EvEntry, slots=list, slot=Py_ssize_t, ppos=list)
    cpdef EvEntry _take(self, Py_ssize_t pos, Py_ssize_t i, Py_ssize_t turn, object now)
    cpdef unpick(self)
    cpdef bint plane_usable(self, object plane) except -1
    cpdef mark_skip(self, EvEntry e, object now)
    cpdef _set(self, EvEntry e, object new, object reason, object now)
