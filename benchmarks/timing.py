"""Timing: medians, interleaved runs, and how figures are printed."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence

# -- timing -----------------------------------------------------------------------------


def timed(fn: Callable[[], object]) -> float:
    """Milliseconds `fn()` takes, after a gc.collect()."""
    gc.collect()
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def median_of(
    runs: int, fn: Callable[[], object], setup: Callable[[], object] | None = None
) -> float:
    times = []
    for _ in range(runs):
        if setup is not None:
            setup()
        times.append(timed(fn))
    return statistics.median(times)


Step = tuple[Callable[[], object], Callable[[], object] | None]


def medians_interleaved(runs: int, steps: Sequence[Step]) -> list[float]:
    """The median time of each `(fn, setup)` step over `runs` rounds, the steps taking turns
    within each round (so a slow spell of the machine hits ours and the floor alike)."""
    times: list[list[float]] = [[] for _ in steps]
    for _ in range(runs):
        for n, (fn, setup) in enumerate(steps):
            if setup is not None:
                setup()
            times[n].append(timed(fn))
    return [statistics.median(t) for t in times]


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 100 else f"{value:.1f}"


def _size(n: int) -> str:
    return f"{n:,} entries"


def _lines(n: int) -> str:
    return f"{n:,} log lines"
