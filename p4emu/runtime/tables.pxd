# Cython declarations for p4emu/runtime/tables.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. A table and its entries become extension types, every attribute
# declared here (an attribute added to the .py must be added here too: the native build
# refuses to set an undeclared one). Match values, priorities, action ids, arguments and
# direct counter cells are numbers of any width the control plane writes: they stay
# Python ints, and flags the caller gives stay what it gave; C types hold only the
# table's own flags and indexes. The gain is C struct access and C calls.
cimport cython
from cpython.bytearray cimport PyByteArray_AS_STRING


cdef unsigned long long _GOLDEN  # the C copy of _GOLDEN: the C map's multiplier


cdef class TableAction:
    cdef public object action_id
    cdef public object args
    cdef readonly bint hit
    cdef public object is_const
    # c_args' copy of args (tables.py, TableAction.c_args) and a pointer to its values
    # (NULL without one), read by compiled generated code while _c_src is args
    cdef object _c_src
    cdef bytearray _c_args
    cdef bint _c_ok
    cdef long long *_c_argp
    # c_action_id's copy of action_id, read by compiled generated code while _c_id_src
    # is action_id
    cdef object _c_id_src
    cdef long long _c_id

    @cython.final
    cdef long long *c_args(self) except? NULL
    @cython.final
    cdef long long c_action_id(self) except? -1
    cpdef c_arg_values(self)
    cpdef _c_copy(self)


cdef class TableEntry(TableAction):
    cdef public object bytes
    cdef public object control_cache
    cdef public object controller_metadata
    cdef public object idle_notified
    cdef public object idle_timeout_ns
    cdef public object key
    cdef public object last_hit_ns
    cdef public object metadata
    cdef public object meter
    cdef public object packets
    cdef public object priority
    cdef public object seq


cdef class DefaultAction(TableAction):
    pass


# final (nothing derives from it): its final methods are called without the check
# for a Python override
@cython.final
cdef class Table:
    cdef public object name
    cdef public tuple key_fields
    cdef public object size
    cdef public object const_entries
    cdef public object allowed_actions
    cdef public object action_param_widths
    cdef public object direct_counter
    cdef public object direct_meter
    cdef public object supports_idle_timeout
    cdef public object clock
    cdef public object requires_priority
    cdef public object _kind
    cdef public dict _entries
    cdef public object _seq
    cdef public dict _exact
    cdef public Py_ssize_t _lpm_index
    cdef public dict _lpm
    cdef public list _lpm_scan
    cdef public list _sorted
    cdef public bint _dirty
    cdef public object _pack
    cdef public object _field_shifts
    cdef public bint _count
    cdef public bint _track_hits
    cdef public DefaultAction _initial_default
    cdef public DefaultAction miss
    cdef public object _lookup
    # exact_at's C map (tables.py, Table.exact_at); _c_keyp: _c_keys' bytes (set with it)
    cdef bytearray _c_keys
    cdef long long *_c_keyp
    cdef list _c_values
    cdef int _c_shift
    cdef Py_ssize_t _c_mask
    cdef bint _c_stale

    @cython.locals(entry=TableEntry)
    cpdef apply(self, object key, object length=*)
    cpdef _lookup_exact(self, object key)
    @cython.final
    @cython.locals(
        keys="long long *", mask=Py_ssize_t, at=Py_ssize_t, found="long long", entry=object
    )
    cpdef TableAction exact_at(self, long long key)
    @cython.locals(
        keys="long long *", at=Py_ssize_t, key="long long", slots=Py_ssize_t, shift=int
    )
    cpdef _c_rebuild(self)
    @cython.locals(bucket=dict, probe=list, index=Py_ssize_t)
    cpdef _lookup_lpm(self, object key)
