# Cython declarations for vfabric/eventlist.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# Times are integer ns below 2**62 (EventList.run's limit), so C long long holds them;
# sequence numbers count the events of one list (below 2**63).
cimport cython

from cpython.object cimport PyObject

from p4emu.runtime.clock cimport VirtualClock


# one pending event of the native heap: its time, tie-breaking number and the slot of
# its callback and argument (EventList._fns / _args)
cdef struct _Event:
    long long t
    long long seq
    Py_ssize_t slot


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


@cython.final  # no subclass: its C methods are called directly
cdef class EventList:
    cdef list _queue
    cdef object _sequence
    cdef public object clock
    cdef public long long events_run
    cdef public long long now
    cdef _Event* _heap
    cdef Py_ssize_t* _free
    # per slot: 1 when its callback is an EventSource to fire in C (push_source), 2 when
    # its fire_int takes _ints[slot] (push_source_int; the argument list holds None)
    cdef unsigned char* _direct
    cdef long long* _ints
    cdef Py_ssize_t _size
    cdef Py_ssize_t _cap
    cdef Py_ssize_t _nfree
    cdef long long _seq
    cdef list _fns
    cdef list _args
    # now_object(): the int object of the time _now_t (now when _now_t == now)
    cdef object _now_obj
    cdef long long _now_t

    # now as an int object: the one given to the clock (a C call: the class is final)
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

    @cython.locals(cap=Py_ssize_t, slot=Py_ssize_t, heap="_Event*", free_slots="Py_ssize_t*",
                   direct="unsigned char*", ints="long long*")
    cdef int _c_grow(self) except -1

    @cython.locals(slot=Py_ssize_t, heap="_Event*", pos=Py_ssize_t, seq="long long")
    cdef Py_ssize_t _c_push(self, long long t, object fn, object arg) except -1

    @cython.locals(heap="_Event*", size=Py_ssize_t, item=_Event, child=Py_ssize_t,
                   end=Py_ssize_t, best=Py_ssize_t, c=Py_ssize_t)
    cdef void _c_sift_down(self, Py_ssize_t pos) noexcept

    @cython.locals(heap="_Event*", size=Py_ssize_t, last=_Event, pos=Py_ssize_t,
                   child=Py_ssize_t, best=Py_ssize_t, c=Py_ssize_t)
    cdef void _c_pop(self) noexcept

    @cython.locals(heap="_Event*", parent=Py_ssize_t)
    cdef inline Py_ssize_t _c_sift_up(self, Py_ssize_t pos, long long t, long long seq) noexcept

    cdef int _c_free(self, Py_ssize_t slot) except -1

    @cython.locals(heap="_Event*", index=Py_ssize_t, last=_Event, pos=Py_ssize_t)
    cdef bint _c_remove(self, long long t, long long seq) except -1

    @cython.locals(
        count=Py_ssize_t,
        i=Py_ssize_t,
        now="long long",
        t="long long",
        limit="long long",
        heap="_Event*",
        going=bint,
        slot=Py_ssize_t,
        direct="unsigned char",
        number="long long",
        moment=object,
        clock=VirtualClock,
        fns=list,
        args=list,
        fn="PyObject*",
        arg="PyObject*",
        held_fn="PyObject*",
        held_arg="PyObject*",
    )
    cdef bint _c_run(self, object until_ns, object stop, Py_ssize_t check_every) except -1
