"""Named workload sets of the differential (docs/reference-htsim.md, "Workloads").

- ``CI``: what the htsim-marked test runs (a 32-host permutation of 4 MiB flows, a 7:1
  incast of 2 MiB flows beside a 4 MiB victim starting with it, and the same victim
  starting 30 µs after the incast, the issue's placement: the issue's measurements);
- ``DEFAULT``: ``benchmarks/htsim_diff.py`` without flags (minutes): ``CI`` plus an
  8-host permutation, an 8-host all-to-all and the 7:1 incast without its victim;
- ``FULL``: ``--full``: fat trees of 8, 32 and 128 hosts, seeds 1-3, permutations of 1
  and 4 MiB flows, all-to-all of 64 and 256 KiB (8 and 32 hosts), incasts 4:1 to 31:1 of
  2 MiB flows with and without a victim, and the issue's placement of the 7:1 victim
  (hours).
"""

from __future__ import annotations

from collections.abc import Sequence

from testbed.reference.exceptions import HtsimDiffError
from testbed.reference.workload import MIB, Workload, default_name

PERMUTATION_BYTES = 4 * MIB
ALL_TO_ALL_BYTES = 256 * 1024
FULL_PERMUTATION_BYTES = (MIB, PERMUTATION_BYTES)
FULL_ALL_TO_ALL_BYTES = (64 * 1024, ALL_TO_ALL_BYTES)
INCAST_BYTES = 2 * MIB  # each sender; the victim sends twice that (Workload.victim_size)
FULL_HOSTS = (8, 32, 128)
FULL_SEEDS = (1, 2, 3)
FULL_FAN_INS = (4, 7, 15, 31)
FULL_ALL_TO_ALL_HOSTS = (8, 32)
# Issue #23's victim: 4 MiB beside a 7-to-1 incast of 2 MiB flows into its neighbour,
# starting this long after the incast (docs/reference-htsim.md, "The issue's placement").
ISSUE_VICTIM_FAN_IN = 7
ISSUE_VICTIM_START_US = 30


def workload(**values: object) -> Workload:
    """A workload named as :func:`default_name` names it."""
    values.setdefault("seed", 1)
    return Workload(name=default_name(values), source="suite", **values)  # type: ignore[arg-type]


def permutation(hosts: int, seed: int = 1, size: int = PERMUTATION_BYTES) -> Workload:
    return workload(hosts=hosts, traffic="permutation", size_bytes=size, seed=seed)


def all_to_all(hosts: int, seed: int = 1, size: int = ALL_TO_ALL_BYTES) -> Workload:
    return workload(hosts=hosts, traffic="all_to_all", size_bytes=size, seed=seed)


def incast(
    hosts: int, fan_in: int, victim: bool, seed: int = 1, victim_start_us: int = 0
) -> Workload:
    extra = {"victim_start_us": victim_start_us} if victim_start_us else {}
    return workload(
        hosts=hosts,
        traffic="incast",
        size_bytes=INCAST_BYTES,
        fan_in=fan_in,
        victim=victim,
        seed=seed,
        **extra,
    )


def issue_victim(hosts: int = 32, seed: int = 1) -> Workload:
    """The issue's placement: the 7:1 incast's victim starting 30 µs after it."""
    return incast(hosts, ISSUE_VICTIM_FAN_IN, True, seed, ISSUE_VICTIM_START_US)


CI = (permutation(32), incast(32, 7, victim=True), issue_victim())
DEFAULT = (permutation(8), *CI, all_to_all(8), incast(32, 7, victim=False))


def full() -> list[Workload]:
    out: list[Workload] = []
    for seed in FULL_SEEDS:
        for hosts in FULL_HOSTS:
            out += [permutation(hosts, seed, size) for size in FULL_PERMUTATION_BYTES]
            if hosts in FULL_ALL_TO_ALL_HOSTS:
                out += [all_to_all(hosts, seed, size) for size in FULL_ALL_TO_ALL_BYTES]
            for fan_in in FULL_FAN_INS:
                for victim in (False, True):
                    if fan_in <= hosts - (3 if victim else 1):
                        out.append(incast(hosts, fan_in, victim, seed))
        out.append(issue_victim(32, seed))
    return out


def select(pool: list[Workload], only: Sequence[str] | None) -> list[Workload]:
    """The workloads of ``pool`` named in ``only`` (all of them when it is empty); a name
    not in the pool is an error that lists the pool's names."""
    if not only:
        return pool
    known = {w.name for w in pool}
    missing = [name for name in only if name not in known]
    if missing:
        raise HtsimDiffError(
            f"--only {missing[0]}: not in the chosen set ({', '.join(sorted(known))})"
        )
    return [w for w in pool if w.name in only]
