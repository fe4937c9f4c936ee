# Cython declarations for vfabric/eventlist.py (pure-Python mode; docs/virtual-fabric.md,
# "Compiled hot path"): read only by the native build, the .py stays the reference.
# Times are integer ns below 2**62 (EventList.run's limit), so C long long holds them.
cimport cython


cdef class EventHandle:
    cdef public object events
    cdef public tuple entry
    cdef public bint cancelled


cdef class EventList:
    cdef list _queue
    cdef object _sequence
    cdef public object clock
    cdef public long long events_run
    cdef public long long now

    cpdef push(self, object t_ns, object fn, object arg)

    @cython.locals(
        heap=list,
        count=Py_ssize_t,
        i=Py_ssize_t,
        now="long long",
        t="long long",
        limit="long long",
    )
    cpdef bint run(self, object until_ns, object stop, object check_every=*)
