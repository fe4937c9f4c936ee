# Cython declarations for vfabric/eventlist.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# Times are integer ns below 2**62 (EventList.run's limit), so C long long holds them;
# sequence numbers count the events of one list (below 2**63).
cimport cython

from cpython.object cimport PyObject

from p4emu.runtime.clock cimport VirtualClock


# one pending event of the native list, kept at its slot (EventList._events[slot]; its
# callback and argument at the same slot of _fns / _args): its time, tie-breaking number
# and the next slot of its bucket's chain (-1: the last)
cdef struct _Event:
    long long t
    long long seq
    Py_ssize_t next


# a bucket of the radix heap: a chain of slots (first to tail, -1: empty) in scheduling
# order among equal times, and the earliest time in it (least; buckets only, not _ready)
cdef struct _Bucket:
    Py_ssize_t first
    Py_ssize_t tail
    long long least


# the radix heap's digits: _DIGIT_BITS bits (_DIGITS values, one bit each of a 64-bit
# mask), _LEVELS of them in 64 bits, a bucket per digit value and level
cdef enum:
    _DIGIT_BITS = 6
    _DIGITS = 64
    _LEVELS = 11
    _BUCKETS = 704


# the bit length of x (0 for 0) and the index of x's lowest set bit (x != 0)
cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    static inline int vf_bit_length(unsigned long long x) { return x ? 64 - __builtin_clzll(x) : 0; }
    static inline int vf_lowest_bit(unsigned long long x) { return __builtin_ctzll(x); }
    #else
    static inline int vf_bit_length(unsigned long long x) { int n = 0; while (x) { n++; x >>= 1; } return n; }
    static inline int vf_lowest_bit(unsigned long long x) { int n = 0; while (!(x & 1)) { n++; x >>= 1; } return n; }
    #endif
    """
    int _bit_length "vf_bit_length"(unsigned long long x) noexcept nogil
    int _lowest_bit "vf_lowest_bit"(unsigned long long x) noexcept nogil


cdef class EventSource:
    cpdef fire(self, object arg)
    # the event of push_source_int: its argument a C integer (no int object per event)
    cpdef fire_int(self, long long arg)


cdef class EventHandle:
    cdef public object events
    cdef public tuple entry
    cdef public bint cancelled


# items[slot] = value in C (the slot below len(items)); the old reference released
@cython.locals(old="PyObject*")
cdef inline void _c_store(list items, Py_ssize_t slot, object value) noexcept

# _c_store on borrowed pointers: for _c_push, whose lists are the event list's own
# (an attribute passed as a list argument is held by a new reference for the call)
cdef extern from *:
    """
    static inline void vf_list_store(PyObject *items, Py_ssize_t slot, PyObject *value) {
        PyObject *old = PyList_GET_ITEM(items, slot);
        Py_INCREF(value);
        PyList_SET_ITEM(items, slot, value);
        Py_XDECREF(old);
    }
    """
    void _list_store "vf_list_store"(PyObject* items, Py_ssize_t slot, PyObject* value) noexcept


@cython.final  # no subclass: its C methods are called directly
cdef class EventList:
    cdef list _queue
    cdef object _sequence
    cdef public object clock
    cdef public long long events_run
    cdef public long long now
    # per slot (_cap of them): the pending event there (_Event), 1 in _direct when its
    # callback is an EventSource to fire in C (push_source), 2 when its fire_int takes
    # _ints[slot] (push_source_int; the argument list holds None)
    cdef _Event* _events
    cdef Py_ssize_t* _free
    cdef unsigned char* _direct
    cdef long long* _ints
    cdef Py_ssize_t _size
    cdef Py_ssize_t _cap
    cdef Py_ssize_t _nfree
    cdef long long _seq
    cdef list _fns
    cdef list _args
    # the radix heap: _last, the time every pending event is at or after; _ready, the
    # events at _last; _buckets[level * _DIGITS + d], those whose time differs from
    # _last first in digit `level` (_DIGIT_BITS bits), d being that digit of their time
    # (bit d of _used[level] set: not empty; bit level of _levels: _used[level] not 0)
    cdef long long _last
    cdef _Bucket _ready
    cdef _Bucket _buckets[_BUCKETS]
    cdef unsigned long long _used[_LEVELS]
    cdef unsigned int _levels
    # now_object(): the int object of the time _now_t (made by its first call at now)
    cdef object _now_obj
    cdef long long _now_t

    # now as an int object, made once per time asked for (a C call: the class is final)
    cpdef object now_object(self)

    # t_ns: a C long long, as _c_push takes it (the same conversion, before the call)
    cpdef push(self, long long t_ns, object fn, object arg)
    cpdef push_source(self, long long t_ns, EventSource source, object arg)
    @cython.locals(slot=Py_ssize_t)
    cpdef push_source_int(self, long long t_ns, EventSource source, long long arg)

    @cython.locals(stopped=bint)
    cpdef bint run(self, object until_ns, object stop, object check_every=*)

    @cython.locals(
        heap=list,
        count=Py_ssize_t,
        i=Py_ssize_t,
        now="long long",
        t="long long",
        limit="long long",
    )
    cdef bint _run(self, object until_ns, object stop, Py_ssize_t check_every) except -1

    @cython.locals(cap=Py_ssize_t, slot=Py_ssize_t, events="_Event*", free_slots="Py_ssize_t*", b=int,
                   direct="unsigned char*", ints="long long*")
    cdef int _c_grow(self) except -1

    @cython.locals(slot=Py_ssize_t, seq="long long")
    cdef Py_ssize_t _c_push(self, long long t, object fn, object arg) except -1

    # where an event at t is filed: -1 (the ready chain) or level * _DIGITS + digit
    @cython.locals(x="unsigned long long", level=int, d="unsigned long long")
    cdef inline Py_ssize_t _c_index(self, long long t) noexcept
    cdef inline _Bucket* _c_bucket(self, Py_ssize_t index) noexcept

    @cython.locals(index=Py_ssize_t, level=int, d=int, bucket="_Bucket*")
    cdef inline void _c_put(self, Py_ssize_t slot, long long t) noexcept

    # the earliest pending time (_size > 0)
    @cython.locals(level=int)
    cdef inline long long _c_next(self) noexcept

    # the earliest pending event off the list (_size > 0): its slot, the caller's
    @cython.locals(slot=Py_ssize_t)
    cdef inline Py_ssize_t _c_take(self) noexcept

    @cython.locals(level=int, d=int, bucket="_Bucket*", last="long long", slot=Py_ssize_t,
                   after=Py_ssize_t, events="_Event*", bucket_tail=Py_ssize_t)
    cdef void _c_settle(self) noexcept

    @cython.locals(events="_Event*", first=Py_ssize_t, tail=Py_ssize_t, slot=Py_ssize_t,
                   after=Py_ssize_t, b=int)
    cdef void _c_rebase(self, long long t) noexcept

    cdef int _c_free(self, Py_ssize_t slot) except -1

    @cython.locals(events="_Event*", index=Py_ssize_t, level=int, d=int,
                   bucket="_Bucket*", slot=Py_ssize_t, before=Py_ssize_t, least="long long")
    cdef bint _c_remove(self, long long t, long long seq) except -1

    @cython.locals(
        count=Py_ssize_t,
        i=Py_ssize_t,
        now="long long",
        t="long long",
        limit="long long",
        going=bint,
        slot=Py_ssize_t,
        direct="unsigned char",
        number="long long",
        clock=VirtualClock,
        fns=list,
        args=list,
        fn="PyObject*",
        arg="PyObject*",
        held_fn="PyObject*",
        held_arg="PyObject*",
    )
    cdef bint _c_run(self, object until_ns, object stop, Py_ssize_t check_every) except -1
