"""A team of agents sharing one brain through git converges: the simulation of
benchmarks/convergence.py at a size for the suite (larger there)."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import convergence


def test_clones_pulling_merging_and_pushing_end_with_the_same_brain(tmp_path: Path) -> None:
    report = convergence.simulate(tmp_path, clones=4, sessions=6, seed=7)
    assert report.conflicts == [] and report.problems == []
    # The run really exercised the driver: merges happened, and pushes were rejected
    # because another clone pushed first, then pulled and pushed again.
    assert report.merges >= 5 and report.push_retries >= 1
