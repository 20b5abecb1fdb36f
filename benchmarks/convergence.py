"""A team of agents sharing one brain through git: does everyone end with the same memory?

Several clones of one repository, each running short sessions in random order: brain.md
entries added (and now and then one removed by hand), brain.json saves, memory-log adds,
updates and removals, an occasional compaction; after each session the clone commits its
brain files, pulls (git runs voyager-brain's merge driver, registered in each clone by
`voyager-brain install git` and nothing else) and pushes to a shared bare repository,
pulling again when the push is rejected. A ledger records what every session wrote and
deliberately removed. At the end every clone pulls once more and must hold byte-identical
brain files, exactly the entries written and not removed, the latest text of every
memory, every decision saved, every session counted, and no conflict marker.

    python benchmarks/convergence.py                 # 8 clones x 30 sessions
    python benchmarks/convergence.py --clones 4 --sessions 10 --seed 3

tests/test_convergence.py runs it at a size that takes well under a minute.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from voyager_brain import BrainEntry, BrainManager, Config
from voyager_brain.memory import log as memory_log
from voyager_brain.memory.tool import brain_tool
from voyager_brain.session.brainfile import parse

BRAIN_FILES = (".voyager/brain.md", ".voyager/brain.json", ".voyager/memory.jsonl")
# Small, so that compaction really folds entries away in a short simulation.
CONFIG = Config(compact_budget_tokens=300, auto_compact=False)
MARKERS = ("<<<<<<<", ">>>>>>>", "\n=======\n")


def _letters(n: int) -> str:
    """A counter spelled in letters: texts that differ only in digits are near-duplicates
    to the memory log's dedup, texts that differ in letters are not."""
    word = ""
    n += 26 * 26  # at least three letters
    while n:
        n, r = divmod(n, 26)
        word = "abcdefghijklmnopqrstuvwxyz"[r] + word
    return word


class Clock:
    """One clock for the whole team, a second per reading: every write has its own time."""

    def __init__(self) -> None:
        self.now = datetime(2026, 5, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@dataclasses.dataclass
class Ledger:
    """What the team wrote and deliberately removed, by the entries' identities."""

    entries_added: set[tuple[str, str, str]] = dataclasses.field(default_factory=set)
    entries_removed: set[tuple[str, str, str]] = dataclasses.field(default_factory=set)
    memories: dict[str, str] = dataclasses.field(default_factory=dict)  # id -> latest text
    memories_removed: set[str] = dataclasses.field(default_factory=set)
    decisions: set[str] = dataclasses.field(default_factory=set)
    state_sessions: int = 0


@dataclasses.dataclass
class Report:
    clones: int
    sessions: int
    seconds: float
    merges: int
    push_retries: int
    conflicts: list[str]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.conflicts and not self.problems


def _env() -> dict[str, str]:
    # git runs the driver as `voyager-brain`: the environment's scripts must be on PATH,
    # as they are for a user with the environment activated.
    scripts = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": scripts + os.pathsep + os.environ.get("PATH", "")}


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=_env(), timeout=120
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {cwd.name}: {done.stderr.strip()}")
    return done


def cli(cwd: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "voyager_brain", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env=_env(),
        timeout=120,
    )


def _session(clone: Path, rng: random.Random, clock: Clock, ledger: Ledger, n: int) -> None:
    """One short agent session in `clone`: a few writes to each brain file."""
    bm = BrainManager(clone, config=CONFIG, clock=clock)
    bm.load()
    for k in range(rng.randint(1, 4)):
        kind = rng.choice(("observation", "observation", "decision", "reflection"))
        entry = BrainEntry(kind, f"{kind} {_letters(n * 10 + k)} in {clone.name}", clock())
        bm.update(entry)
        ledger.entries_added.add(entry.key)
    if rng.random() < 0.1 and bm.entries:
        victim = rng.choice(list(bm.entries))
        bm.remove(victim)
        ledger.entries_removed.add(victim.key)
    if rng.random() < 0.5:
        what = f"Decide {_letters(n)} for {clone.name}"
        bm.merge_state({"decisions": [{"what": what, "why": "simulated"}]})
        ledger.decisions.add(what)
        ledger.state_sessions += 1
    before = {e.key for e in bm.entries}
    if rng.random() < 0.15:
        bm.compact()
        after = {e.key for e in bm.entries}
        ledger.entries_removed |= before - after
        ledger.entries_added |= after - before
    bm.persist()

    for k in range(rng.randint(0, 3)):
        text = f"lesson {_letters(n * 10 + k)} {clone.name}"
        result = brain_tool(
            "add", cwd=str(clone), clock=clock, type="learning", text=text, store="project"
        )
        ledger.memories[result["entries"][0]["id"]] = text
    live = [
        e
        for e in brain_tool("list", cwd=str(clone), type="learning")["entries"]
        if e["id"] in ledger.memories
    ]
    if live and rng.random() < 0.3:
        target = rng.choice(live)
        text = f"lesson {_letters(n * 10 + 7)} revised {clone.name}"
        brain_tool("update", cwd=str(clone), clock=clock, id=target["id"], text=text)
        ledger.memories[target["id"]] = text
    if live and rng.random() < 0.15:
        target = rng.choice(live)
        brain_tool("remove", cwd=str(clone), clock=clock, id=target["id"])
        ledger.memories_removed.add(target["id"])


def _commit_and_pull(clone: Path, report: Report) -> bool:
    """Commit the brain files and merge what others pushed (git runs the driver).
    False when the merge failed: a conflict, which the team must never meet."""
    git(clone, "add", "-A", "--", ".voyager")  # its .gitignore keeps cache/ and locks out
    git(clone, "commit", "-q", "-m", "brain: session", check=False)
    pulled = git(clone, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", check=False)
    if pulled.returncode != 0:
        report.conflicts.append(f"{clone.name}: {pulled.stdout.strip()} {pulled.stderr.strip()}")
        git(clone, "merge", "--abort", check=False)
        return False
    if git(clone, "log", "-1", "--format=%P").stdout.count(" ") == 1:
        report.merges += 1
    return True


def _push(clone: Path, report: Report) -> None:
    """Push; when others pushed first, pull (merge) and push again."""
    for _ in range(50):
        if git(clone, "push", "-q", "origin", "HEAD:main", check=False).returncode == 0:
            return
        report.push_retries += 1
        if not _commit_and_pull(clone, report):
            return
    report.conflicts.append(f"{clone.name}: push kept being rejected")


def _check(clones: list[Path], ledger: Ledger, report: Report) -> None:
    first = clones[0]
    for clone in clones:
        for name in BRAIN_FILES:
            data = (clone / name).read_bytes() if (clone / name).exists() else b""
            theirs = (first / name).read_bytes() if (first / name).exists() else b""
            if data != theirs:
                report.problems.append(f"{clone.name}/{name} differs from {first.name}'s")
            text = data.decode()
            if any(marker in text for marker in MARKERS):
                report.problems.append(f"{clone.name}/{name} holds a conflict marker")
        if git(clone, "status", "--porcelain", "--", ".voyager").stdout.strip():
            report.problems.append(f"{clone.name}: brain files left uncommitted")

    path = first / ".voyager" / "brain.md"
    keys = {e.key for e in parse(path.read_bytes(), path).entries}
    expected = ledger.entries_added - ledger.entries_removed
    for key in sorted(expected - keys):
        report.problems.append(f"brain.md lost {key[0]} {key[1]}: {key[2][:60]}")
    for key in sorted(keys - expected):
        report.problems.append(f"brain.md holds {key[0]} {key[1]} that was removed or unknown")

    entries, health = memory_log.read(first / ".voyager" / "memory.jsonl")
    if health.bad_lines:
        report.problems.append(f"memory.jsonl has {health.bad_lines} bad lines")
    live = memory_log.fold(entries).entries
    for memory_id, text in sorted(ledger.memories.items()):
        if memory_id in ledger.memories_removed:
            if memory_id in live:
                report.problems.append(f"memory {memory_id} was removed and came back")
        elif memory_id not in live:
            report.problems.append(f"memory {memory_id} lost ({text})")
        elif live[memory_id].get("text") != text:
            report.problems.append(
                f"memory {memory_id}: {live[memory_id].get('text')!r} != {text!r}"
            )

    state = json.loads((first / ".voyager" / "brain.json").read_text())
    saved = {d["what"] for d in state["decisions"]}
    for what in sorted(ledger.decisions - saved):
        report.problems.append(f"brain.json lost the decision {what!r}")
    if state["sessionCount"] != ledger.state_sessions:
        report.problems.append(
            f"brain.json counts {state['sessionCount']} sessions, {ledger.state_sessions} saved"
        )


def simulate(parent: Path, clones: int = 8, sessions: int = 30, seed: int = 1) -> Report:
    """Run the team in `parent` (an empty folder) and check where it ends."""
    start = time.perf_counter()
    rng = random.Random(seed)
    clock = Clock()
    ledger = Ledger()
    report = Report(clones, sessions, 0.0, 0, 0, [], [])

    origin = parent / "origin.git"
    git(parent, "init", "-q", "--bare", "-b", "main", str(origin))
    founder = parent / "founder"
    git(parent, "clone", "-q", str(origin), str(founder))
    cli(founder, "init")
    cli(founder, "install", "git")
    git(founder, "add", "-A")
    git(founder, "commit", "-q", "-m", "voyager-brain init")
    git(founder, "push", "-q", "origin", "HEAD:main")

    team = []
    for n in range(clones):
        clone = parent / f"agent-{n}"
        git(parent, "clone", "-q", str(origin), str(clone))
        cli(clone, "install", "git")  # the only setup a fresh clone needs
        team.append(clone)

    # In random order, each clone: pushes what it merged last time (if it waited), runs
    # a session, commits and pulls, and pushes now or at its next turn, so that others
    # push in between and its push is rejected, as when agents work at the same time.
    turns = [clone for clone in team for _ in range(sessions)]
    rng.shuffle(turns)
    waiting: set[Path] = set()
    for n, clone in enumerate(turns):
        if clone in waiting:
            _push(clone, report)
            waiting.discard(clone)
        _session(clone, rng, clock, ledger, n)
        if _commit_and_pull(clone, report):
            if rng.random() < 0.5:
                _push(clone, report)
            else:
                waiting.add(clone)
    for clone in team:
        if clone in waiting:
            _push(clone, report)
    for clone in team:
        git(clone, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    _check(team, ledger, report)
    report.seconds = time.perf_counter() - start
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clones", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=30, help="sessions per clone")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("VOYAGER_HOME", str(Path(tmp) / "home"))
        report = simulate(Path(tmp), args.clones, args.sessions, args.seed)
    print(
        f"{report.clones} clones x {report.sessions} sessions: {report.merges} merges, "
        f"{report.push_retries} rejected pushes pulled again, {report.seconds:.1f} s"
    )
    for line in report.conflicts + report.problems:
        print(f"  {line}")
    print("converged" if report.ok else "DID NOT CONVERGE")
    sys.exit(0 if report.ok else 1)


if __name__ == "__main__":
    main()
