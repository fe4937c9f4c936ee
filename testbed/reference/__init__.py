"""The differential against uet-htsim's ``htsim_uec`` (docs/reference-htsim.md).

One workload description (:mod:`testbed.reference.workload`) is translated into htsim's
inputs and run there (:mod:`testbed.reference.htsim`) and into a virtual-fabric run of the
same shape (:mod:`testbed.reference.vfside`); :mod:`testbed.reference.compare` compares
them per flow and checks the issue's targets (:mod:`testbed.reference.targets`).
"""
