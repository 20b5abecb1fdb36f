"""Redaction on the hook path: a 1 MB transcript, a 200-byte observation, the import."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks.guard import make_transcript
from benchmarks.plan import (
    REDACT_OBSERVATION_TARGET_MS,
    REDACT_TRANSCRIPT_TARGET_MS,
    ROOT,
    SEED,
    Plan,
    Results,
    Row,
)
from benchmarks.session import child_env
from benchmarks.timing import medians_interleaved
from voyager_brain.redact import redact
from voyager_brain.secretkinds import PROVIDER_KINDS

# 200 bytes each: what an agent's observation looks like, without and with a secret.
OBSERVATION = (
    "Decision: keep the connection pool in db/pool.py; the flaky test was a retry loop "
    "in sync.py that never backed off. Fixed it, 42 of 42 tests pass, CI is green again "
    "on the main branch now."
)
SENDGRID = next(kind.example for kind in PROVIDER_KINDS if kind.name == "sendgrid-key")
OBSERVATION_WITH_SECRET = (
    f"Observed: the deploy failed because SENDGRID_API_KEY={SENDGRID} was rejected "
    "by the mail relay; rotated it."
)
# Never matches, and is tried at every character: one plain pass of the regex engine.
TRIVIAL = re.compile(r"[\x00]")


def transcript_text(parent: Path, size: int) -> str:
    """A Claude Code transcript of about `size` bytes (the guard benchmark's), with one
    fake secret of a different kind every ~20 KB among its tool outputs."""
    path = parent / "redaction-transcript.jsonl"
    make_transcript(path, size / 1e6, SEED + 21)
    lines = path.read_text(encoding="utf-8").split("\n")
    step = max(1, len(lines) * 20_000 // max(size, 1))
    for n, i in enumerate(range(0, len(lines), step)):
        example = PROVIDER_KINDS[n % len(PROVIDER_KINDS)].example.replace("\n", " ")
        lines[i] = lines[i][:-1] + f', "note": "saw {example}"}}' if lines[i] else lines[i]
    return "\n".join(lines)


def bench_redaction(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    """`redact` in process beside one pass of a trivial regex over the same text, and
    the import of the redaction module (and a first redaction) beside `python -c pass`."""
    print("redaction ...", flush=True)
    text = transcript_text(parent, plan.redact_bytes)
    redact(text)  # the table compiled, as in a hook after its first call
    runs = plan.redact_runs
    for what, sample, target in (
        ("redact() of a transcript (fake secrets ~ every 20 KB)", text,
         REDACT_TRANSCRIPT_TARGET_MS),
        ("redact() of an observation, no secret", OBSERVATION, REDACT_OBSERVATION_TARGET_MS),
        ("redact() of an observation with a secret", OBSERVATION_WITH_SECRET,
         REDACT_OBSERVATION_TARGET_MS),
    ):  # fmt: skip
        # A 200-byte redaction takes a tenth of a millisecond: more samples, same cost.
        n = runs * (1 if len(sample) > 10_000 else 50)
        ours, floor = medians_interleaved(
            n, [(lambda s=sample: redact(s), None), (lambda s=sample: TRIVIAL.search(s), None)]
        )
        size = f"{len(sample.encode()):,} B"
        results.add(
            "redaction", Row(what, size, n, ours, floor, f"<= {target:g} ms", ours <= target)
        )

    def python(code: str) -> Callable[[], object]:
        env = child_env(pycache)

        def run() -> None:
            subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)

        return run

    first = f"from voyager_brain.redact import redact; redact({OBSERVATION_WITH_SECRET!r})"
    bare, imported, redacted = medians_interleaved(
        plan.startup_runs,
        [
            (python("pass"), None),
            (python("import voyager_brain.redact"), None),
            (python(first), None),
        ],
    )
    results.add("redaction", Row("python -c pass", "-", plan.startup_runs, bare))
    results.add(
        "redaction",
        Row("python -c 'import voyager_brain.redact'", "-", plan.startup_runs, imported, bare),
    )
    results.add(
        "redaction",
        Row(
            "same + a first redact() of an observation with a secret",
            "-",
            plan.startup_runs,
            redacted,
            bare,
        ),
    )
