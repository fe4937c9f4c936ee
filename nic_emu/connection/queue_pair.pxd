# Cython declarations for nic_emu/connection/queue_pair.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. Connection becomes an extension type, every attribute declared
# here (an attribute added to the .py must be added here too): its parts are typed, so
# the NIC core reads them (the send turn's waits, the deadlines' verdict) as C structs.
# C integers hold the host's scheduling indexes (a creation count, a ready index, a
# plane or -1); the entry points stay the parts' bound methods, as on the pure path.
cimport cython

from nic_emu.congestion cimport WindowControl
from nic_emu.connection.feedback cimport Feedback, Losses, TailProbe
from nic_emu.connection.probes cimport PathProbes
from nic_emu.connection.receive cimport Receiver
from nic_emu.connection.records cimport ConnectionCounters
from nic_emu.connection.repath cimport Repath
from nic_emu.connection.rtt cimport RttTimers
from nic_emu.connection.timers cimport Deadlines
from nic_emu.connection.transmit cimport Transmitter
from nic_emu.ev_set cimport EvSet
from nic_emu.sender cimport SendState


cdef class Connection:
    cdef public object nic
    cdef public object cfg
    cdef public object qpn
    cdef public object peer
    cdef public object peer_qpn
    cdef public object mode
    cdef public bint mrc
    cdef public object state
    cdef public object error
    cdef public object created_ns
    cdef public object _acked_per_plane
    cdef public object _acked_per_path
    cdef public object _rng
    cdef public list peer_addrs
    cdef public object _peer_addr_set
    cdef public object log
    cdef public ConnectionCounters counters
    cdef public object _next_wr_id
    cdef public long long created_seq
    cdef public Py_ssize_t ready_index
    cdef public object sched_deadline
    cdef public bint sched_by_peer
    cdef public long long sched_key
    cdef public Py_ssize_t heap_pos
    cdef public Py_ssize_t parked_plane
    cdef public object send_one
    cdef public object window_blocked
    cdef public object on_sack
    cdef public object on_nack
    cdef public object on_timer
    cdef public object timer_deadline
    cdef public object next_deadline
    cdef public object path_report
    cdef public object on_probe_answer
    cdef public object shared_path_failure
    cdef public object shared_hold
    cdef public object release_shared_hold
    cdef public object plane_down
    cdef public object plane_up
    cdef public object on_data
    cdef public object on_reliability_probe
    cdef public object _mtu
    cdef public object _window
    cdef public SendState send
    cdef public RttTimers timers
    cdef public object gbn
    cdef public object dcqcn
    cdef public EvSet evs
    cdef public WindowControl cc
    cdef public PathProbes probes
    cdef public Receiver rx
    cdef public Transmitter tx
    cdef public Losses losses
    cdef public TailProbe tail
    cdef public Feedback feedback
    cdef public Deadlines deadlines
    cdef public Repath repath

    @cython.locals(
        tx=object, feedback=object, deadlines=object, repath=object, probes=object, rx=object,
    )
    cpdef _bind_entry_points(self)
