# Cython declarations for nic_emu/connection/repath.py (pure-Python mode;
# docs/virtual-fabric.md, "Compiled hot path"): read only by the native build, the .py
# stays the reference. Repath becomes an extension type, every attribute declared here
# (an attribute added to the .py must be added here too). Its methods answer the EV
# set's callbacks, probe answers and port changes (not every packet): they stay Python
# methods, with the parts they move read as C structs; the peer's silence (the
# deadlines, known through the PeerSilence protocol) stays a Python object.
cimport cython

from nic_emu.connection.feedback cimport Losses
from nic_emu.connection.probes cimport PathProbes
from nic_emu.connection.records cimport ConnectionCounters, ConnectionLog
from nic_emu.ev_set cimport EvSet
from nic_emu.sender cimport SendState


cdef class Repath:
    cdef public object host
    cdef public object qp
    cdef public object qpn
    cdef public object path_verdicts
    cdef public EvSet evs
    cdef public SendState send
    cdef public PathProbes probes
    cdef public Losses losses
    cdef public object silence
    cdef public ConnectionCounters counters
    cdef public ConnectionLog log
