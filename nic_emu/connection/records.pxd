# Cython declarations for nic_emu/connection/records.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path" and "NIC per packet, round 2"): read only by
# the native build, the .py stays the reference. ConnectionLog becomes an extension type,
# every attribute declared here (an attribute added to the .py must be added here too);
# its methods stay Python methods (they take the record's detail as keywords), run as C,
# but for ``ev_state`` (no keywords: a C method the repath part calls, session 21).

from nic_emu.ev_set cimport EvEntry


cdef class ConnectionLog:
    cdef public object log
    cdef public object nic
    cdef public object qpn

    cpdef ev_state(self, object now, EvEntry e, object old, object new, object reason)
