"""Secrets in the brain files, as `voyager-brain doctor` finds them: brain.md (its entries
and the text before them), brain.json, both memory logs and the agents' ``.brain/*.md``;
`--repair` redacts them in place (locked, atomic; a file that does not parse is left as
it is)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import storage
from ..config import load_config
from ..errors import ConfigError, CorruptFileError
from ..session import brainfile
from ..session.manager import BrainManager, Clock, redacted_head
from .finding import Finding


def check_brain_md(
    top: Path, doc: brainfile.BrainDocument, repair: bool, clock: Clock
) -> Iterator[Finding]:
    from ..check import secret_problems
    from ..redact import find_secrets, redact

    leaking = [e for e in doc.entries if find_secrets(e.content)]
    # The text before the first entry (front matter, title, a hand-written preamble) is
    # in git as much as the entries are.
    head = redacted_head(doc) is not doc
    if not leaking and not head:
        yield Finding("ok", "brain.md holds no secrets that voyager-brain recognises")
        return
    data = storage.read_bytes(top / ".voyager" / "brain.md") or b""
    where = _where(secret_problems(".voyager/brain.md", data))
    counted = [f"{len(leaking)} entr{'y' if len(leaking) == 1 else 'ies'}"] if leaking else []
    counted += ["the text before the first entry"] if head else []
    verb = (
        "contains"
        if counted == ["1 entry"] or counted == ["the text before the first entry"]
        else "contain"
    )
    message = f"brain.md: {' and '.join(counted)} {verb} what looks like a secret ({where})"
    if not repair:
        yield Finding("error", message, "`doctor --repair` redacts them (check git history too)")
        return
    bm = BrainManager(top, clock=clock)
    bm.load()
    for entry in leaking:
        if bm.remove(entry):
            bm.update(entry.replace(content=redact(entry.content)))
    bm.persist(redact_head=True)
    yield Finding(
        "error",
        message + "; redacted (the old text is still in git history)",
        repaired=True,
    )


def _where(problems: list[Any]) -> str:
    """``file:line (kind)`` of each problem, the first ten of them."""
    shown = [f"{p.path}:{p.line} {p.message.removeprefix('unredacted secret ')}" for p in problems]
    return ", ".join(shown[:10]) + (f" and {len(shown) - 10} more" if len(shown) > 10 else "")


def check_stored(top: Path, repair: bool, clock: Clock) -> Iterator[Finding]:
    """brain.json and both memory logs: every line holding a secret, as file:line;
    `--repair` redacts them in place (locked, atomic; a file that does not parse is
    left as it is)."""
    from ..check import agent_files, secret_problems
    from ..paths import personal_log_file

    files = [
        (".voyager/brain.json", top / ".voyager" / "brain.json"),
        (".voyager/memory.jsonl", top / ".voyager" / "memory.jsonl"),
    ]
    try:
        personal = load_config(top / ".voyager").redact_secrets
    except ConfigError:
        personal = True  # _check_config reports the file; the log is checked meanwhile
    if personal:  # `redact_secrets = false` keeps secrets in the personal log on purpose
        files.append(("personal memory.jsonl", Path(personal_log_file())))
    # What the pipeline's agents write into .brain/ goes through no redaction.
    files += [(name, top / name) for name in agent_files(top)]
    for label, path in files:
        data = storage.read_bytes(path)
        problems = secret_problems(label, data) if data is not None else []
        if not problems:
            continue
        message = f"{label}: {len(problems)} secrets, by the look of them ({_where(problems)})"
        if not repair:
            yield Finding(
                "error", message, "`doctor --repair` redacts them (check git history too)"
            )
            continue
        with storage.locked(path):
            data = storage.read_bytes(path) or b""  # as it is now, under the lock
            if label.endswith(".md"):
                redacted: bytes | None = _redacted_text(data)
            elif label.endswith(".json"):
                redacted = _redacted_json(data, path)
            else:
                redacted = _redacted_log(data)
            if redacted is not None and redacted != data:
                storage.atomic_write(path, redacted)
        if redacted is None:
            yield Finding(
                "error",
                message + "; not repaired: the file does not parse",
                "fix the file first (`voyager-brain check` says where)",
            )
        else:
            yield Finding(
                "error",
                message + "; redacted (the old text is still in git history)",
                repaired=True,
            )


def _redacted_text(data: bytes) -> bytes:
    """A markdown file redacted; bytes that are not UTF-8 are kept as they are."""
    from ..redact import redact

    return redact(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def _redacted_json(data: bytes, path: Path) -> bytes | None:
    """brain.json with every string redacted, in the file's own format; None when it does
    not parse."""
    from ..redact import redact_json
    from ..state import brainjson as state

    try:
        document = state.loads(data, path)
    except CorruptFileError:
        return None
    return state.dumps(redact_json(document)).encode()  # type: ignore[arg-type]


def _redacted_log(data: bytes) -> bytes | None:
    """A memory log with the lines that hold a secret redacted (the others kept byte for
    byte); None when a line does not parse."""
    import json

    from ..memory.log import encode
    from ..redact import find_secrets, redact_json

    lines = data.split(b"\n")
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            return None
        if find_secrets(raw.decode("utf-8", errors="replace")):
            lines[i] = encode(redact_json(entry)).rstrip(b"\n")  # type: ignore[arg-type]
    return b"\n".join(lines)
