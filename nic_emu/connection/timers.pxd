# Cython declarations for nic_emu/connection/timers.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. Deadlines becomes an extension type, every attribute declared
# here (an attribute added to the .py must be added here too); it reads the send state,
# the RTT timers, the probes and the tail-loss probe as C structs and calls them through
# vtables. The receive side's and the send turn's waits (``acks``, ``waits``) stay
# Python objects: the deadlines know them through protocols (AckSchedule, SendWaits),
# which unit tests fill with doubles; timer_deadline reads them as C fields when they are
# the connection's own Receiver and Transmitter (cimported). Deadlines are None or a time
# that may add a configured value: they stay Python objects.
cimport cython

from nic_emu.connection.feedback cimport Losses, TailProbe
from nic_emu.connection.probes cimport PathProbes
from nic_emu.connection.receive cimport Receiver
from nic_emu.connection.rtt cimport RttTimers
from nic_emu.connection.transmit cimport Transmitter
from nic_emu.ev_set cimport EvSet
from nic_emu.nic_host cimport NicHost
from nic_emu.sender cimport SendState, TxPacket


cdef class Deadlines:
    cdef public object host
    cdef public object qp
    cdef public SendState send
    cdef public EvSet evs
    cdef public RttTimers timers
    cdef public object acks
    cdef public object waits
    cdef public PathProbes probes
    cdef public TailProbe tail
    cdef public Losses losses
    cdef public object peer
    cdef public object peer_qpn
    cdef public bint mrc
    cdef public object gbn
    cdef public object counters
    cdef public object log
    cdef public object peer_timeout_ns
    cdef public object max_retries
    cdef public object quiet_since
    cdef public object no_ev_timeout_ns
    cdef public bint by_peer

    cpdef object next_deadline(self)
    @cython.locals(send=SendState, timers=RttTimers)
    cpdef object timer_deadline(self)
    @cython.locals(host=NicHost)
    cpdef object peer_deadline(self)
    cpdef peer_answered(self, object now)
    @cython.locals(out=list)
    cpdef list on_timer(self, object now)
    @cython.locals(send=SendState, timers=RttTimers, pkt=TxPacket, late=TxPacket)
    cpdef check_timeouts(self, object now)
    @cython.locals(timers=RttTimers)
    cpdef silent_timeout(self, object now, object what)
