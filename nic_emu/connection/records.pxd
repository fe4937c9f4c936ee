# Cython declarations for nic_emu/connection/records.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path" and "NIC per packet, round 2"): read only by
# the native build, the .py stays the reference. ConnectionCounters and ConnectionLog
# become extension types, every attribute declared here (an attribute added to the .py
# must be added here too); ConnectionLog's methods stay Python methods (they take the
# record's detail as keywords), run as C, but for ``ev_state`` (no keywords: a C method
# the repath part calls, session 21).

from nic_emu.ev_set cimport EvEntry


# A connection's counters as C integers (session 26): the parts count in them with a C
# increment (each part types its ``counters`` so); readers see the mapping records.py
# gives. One field per name of COUNTERS, the same names (a name added there is added
# here too). Counters, their base, has no field: the mapping the readers see.
cdef class Counters:
    pass


cdef class ConnectionCounters(Counters):
    cdef public long long tx_data
    cdef public long long tx_rtx
    cdef public long long tx_sack
    cdef public long long tx_nack
    cdef public long long tx_probe
    cdef public long long rx_data
    cdef public long long rx_dup
    cdef public long long rx_out_of_order
    cdef public long long rx_out_of_window
    cdef public long long rx_trimmed
    cdef public long long rx_trimmed_ignored
    cdef public long long rx_access_error
    cdef public long long rx_sack
    cdef public long long rx_nack
    cdef public long long rx_nack_stale
    cdef public long long rx_bad_ack
    cdef public long long ecn_echo_rx
    cdef public long long losses_reorder
    cdef public long long losses_timeout
    cdef public long long losses_port
    cdef public long long losses_path
    cdef public long long paths_shared
    cdef public long long losses_tail_probe
    cdef public long long losses_overtaken
    cdef public long long tx_tail_probe
    cdef public long long path_suspects
    cdef public long long path_suspects_cleared
    cdef public long long rto_silent
    cdef public long long gobackn_rewinds
    cdef public long long sack_no_path
    cdef public long long bytes_placed
    cdef public long long writes_completed
    cdef public long long writes_received


cdef class ConnectionLog:
    cdef public object log
    cdef public object nic
    cdef public object qpn

    cpdef ev_state(self, object now, EvEntry e, object old, object new, object reason)
