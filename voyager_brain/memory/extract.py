"""Auto-memory: up to three durable learnings or preferences from a conversation.

Seed 001's rules: at most 3 items per pass, each under 200 characters, deduplicated
against what is stored (the stored memories are sent to the model as context so it does
not restate them), stored with source ``auto``. Off when ``auto_memory`` is false, when
``VOYAGER_AUTO_MEMORY=0``, and in agents started by other agents (``VOYAGER_SUBAGENT=1``).

Without a model the extraction is offline and deterministic: explicit statements by the
user, such as "we use X", "always ..." / "never ...", "prefer ...". With ``model_command``
the model proposes the items; if it fails, the offline path runs instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from .. import storage
from ..config import Config
from ..paths import voyager_home
from ..providers import Provider, ProviderError
from .rank import normalize_text

MAX_ITEMS = 3
MAX_CHARS = 200

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_LEARNING = re.compile(
    r"\b(?:we|this (?:repo|project|team)) (?:use|uses|run|runs|deploy|deploys)\b", re.IGNORECASE
)
_PREFERENCE = re.compile(
    r"\b(?:always|never|prefer|prefers|please don't|don't ever)\b", re.IGNORECASE
)


def enabled(config: Config) -> bool:
    """Whether auto-memory may run here."""
    if os.environ.get("VOYAGER_SUBAGENT") == "1":
        return False
    if os.environ.get("VOYAGER_AUTO_MEMORY") == "0":
        return False
    return config.auto_memory


def read_conversation(text: str) -> list[tuple[str, str]]:
    """(role, text) pairs from an agent's session log (any format `transcripts` reads),
    or plain text as one user message."""
    from .. import transcripts

    records = transcripts.entries(text)
    if records is None:
        return [("user", text)] if text.strip() else []
    messages: list[tuple[str, str]] = []
    for record in records:
        if isinstance(record, dict) and record.get("type") in ("user", "assistant"):
            said = transcripts.message_text(record.get("message"))
            if said and said.strip():
                messages.append((str(record["type"]), said))
    return messages


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) < MAX_CHARS else text[: MAX_CHARS - 2].rstrip() + "…"


def offline_candidates(
    messages: Iterable[tuple[str, str]], stored: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """Explicit statements by the user, newest first, at most `MAX_ITEMS`, leaving out
    those already `stored` (so a pass after every turn reaches past what earlier passes
    took)."""
    found: list[dict[str, Any]] = []
    known = {normalize_text(text) for text in stored}
    seen: set[str] = set()
    for role, text in reversed(list(messages)):
        if role != "user":
            continue
        for sentence in reversed(_SENTENCE.findall(text)):
            sentence = sentence.strip()
            if not sentence or sentence.endswith("?") or sentence.lower() in seen:
                continue
            if _PREFERENCE.search(sentence):
                item = {"type": "preference", "category": "General", "text": _clip(sentence)}
            elif _LEARNING.search(sentence):
                item = {"type": "learning", "text": _clip(sentence)}
            else:
                continue
            seen.add(sentence.lower())
            if normalize_text(item["text"]) in known:
                continue
            found.append(item)
            if len(found) == MAX_ITEMS:
                return found
    return found


PROMPT = """\
From the conversation below, extract at most 3 durable facts worth remembering in later
sessions: conventions of this project (learning) or the user's explicit preferences
(preference). Each under 200 characters. Do not repeat what is already stored. Answer with
one item per line, exactly as `learning: TEXT` or `preference [CATEGORY]: TEXT`, or `none`.

Already stored:
{stored}

Conversation:
{conversation}
"""
_ANSWER = re.compile(r"^\s*(learning|preference)(?:\s*\[([^\]]+)\])?\s*:\s*(.+?)\s*$", re.I)


def model_candidates(
    provider: Provider, messages: list[tuple[str, str]], stored: list[str]
) -> list[dict[str, Any]]:
    """What the model proposes, parsed from its answer. Raises `ProviderError`."""
    conversation = "\n".join(f"{role}: {text}" for role, text in messages[-40:])
    answer = provider.complete(
        PROMPT.format(
            stored="\n".join(f"- {s}" for s in stored) or "(nothing)",
            conversation=conversation[-20000:],
        )
    )
    items: list[dict[str, Any]] = []
    for line in answer.splitlines():
        m = _ANSWER.match(line)
        if m is None:
            continue
        kind, category, text = m[1].lower(), m[2], m[3]
        item: dict[str, Any] = {"type": kind, "text": _clip(text)}
        if kind == "preference":
            item["category"] = (category or "General").strip()
        items.append(item)
        if len(items) == MAX_ITEMS:
            break
    return items


def extract(
    transcript: str,
    *,
    cwd: str,
    config: Config,
    provider: Provider | None,
    warn: Any = None,
) -> list[dict[str, Any]]:
    """Propose and store up to three memories from `transcript`; return the brain tool's
    results (duplicates are reported by it, not stored)."""
    from .store import MemoryStore
    from .tool import brain_tool

    if not enabled(config):
        return []
    messages = read_conversation(transcript)
    # One pass at a time on this machine (after a turn, before compaction, at session
    # end): each pass must see what the previous one stored, or both could store it.
    with storage.locked(
        voyager_home() / "cache" / "extract", timeout=max(60.0, config.model_timeout_seconds * 2)
    ):
        live = MemoryStore(cwd).snapshot().state
        stored = [str(e.get("text")) for t in ("learning", "preference") for e in live.live(t)]
        candidates: list[dict[str, Any]] = []
        if provider is not None:
            try:
                candidates = model_candidates(provider, messages, stored)
            except ProviderError as exc:
                if warn is not None:
                    warn(f"model failed ({exc}); using the offline extractor")
                candidates = offline_candidates(messages, stored)
        else:
            candidates = offline_candidates(messages, stored)
        return [
            brain_tool("add", cwd=cwd, config=config, source="auto", **item) for item in candidates
        ]
