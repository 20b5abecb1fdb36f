"""Guard rules proposed from what the user said and what the memory learned.

Sources: the user's corrections in a Claude Code transcript ("no, use uv add, never pip
install", "use pnpm instead of npm", "stop using sudo"; a bare "no, use Y" right after a
shell command forbids that command), and the memory logs: entries saying never / don't /
use Y instead of X / use Y, not X, and ``dont`` behaviors (but the seeded ones, which are
about how the agent talks and were written for nobody in particular).

What reads as a shell command (a known program such as ``pip``, or a command in
backticks) becomes a ``Bash`` regex with word boundaries and flexible whitespace
(``\\bpip\\s+install\\b``), anything else a semantic rule: the sentence itself. Every
proposal's action is ``warn``: it is a guess from English, and a wrong guess that blocks
stops the agent where a wrong warning costs a line; make it ``block`` once it has proven
itself. With ``model_command`` the model proposes instead, in JSON, each proposal checked
like a rule from the command line; if it fails the heuristic does the work. Proposals
repeating another or an existing rule are left out; nothing is enforced until `accept`.

Standard library only; the memory logs and the model provider are imported when used.
"""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence

from ..confine import open_regular
from ..errors import RuleError
from ..value import Record
from .corrections import PROHIBIT, Finding, command_of, command_pattern, findings
from .rules import Rule, add_rule, check_fields, list_rules, redacted
from .transcript import WRAPPERS, import_transcript

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..config import Config
    from ..providers import Provider

#: The action of every proposal (see the module's docstring for why not ``block``).
ACTION = "warn"
TRANSCRIPT, MEMORY = "transcript", "memory"
#: Texts longer than this are clipped in descriptions and problems.
MAX_TEXT = 200

Warn = Callable[[str], None]


class Suggestion(Record):
    """A proposed guard rule, and where it was found: ``source`` is ``transcript`` (with
    the user message's uuid as ``source_id``) or ``memory`` (with the entry's id)."""

    description: str
    pattern: str | None
    type: str  # regex, or semantic (pattern None)
    action: str
    tool: str | None
    problem: str | None
    solution: str | None
    source: str
    source_id: str | None

    @property
    def key(self) -> str:
        """Stable across runs: the pattern, or a semantic rule's description in words."""
        return f"regex:{self.pattern}" if self.pattern else f"semantic:{_normal(self.description)}"

    def to_dict(self) -> dict[str, Any]:
        return {**self._asdict(), "key": self.key}


class Candidate(Record):
    """A user message or a memory entry (`where` says which, for the problem). For a
    message, `previous_command`: the shell command the agent ran before it (what a bare
    "no, use Y" corrects); for a ``dont`` behavior, `forbidden`: all of it is forbidden."""

    source: str
    source_id: str | None
    text: str
    where: str
    previous_command: str | None = None
    forbidden: bool = False


def _normal(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _clip(text: str, limit: int = MAX_TEXT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# -- the sources ----------------------------------------------------------------------------


def read_transcript(path: str | os.PathLike[str]) -> list[Candidate]:
    """The user's messages in the Claude Code transcript at `path`, in order."""
    try:
        with io.TextIOWrapper(open_regular(path), encoding="utf-8", errors="replace") as f:
            return parse_transcript(f)
    except OSError as exc:
        raise RuleError(f"{path}: cannot read the transcript: {exc.strerror or exc}") from None


def parse_transcript(lines: Iterable[str]) -> list[Candidate]:
    """The user's messages in transcript `lines`: what they typed, not tool results nor
    what Claude Code wrote itself (what `transcript.import_transcript` skips too). Lines
    that are not JSON objects are skipped."""
    found: list[Candidate] = []
    command: str | None = None
    for line in lines:
        try:
            entry = json.loads(line) if line.strip() else None
        except (ValueError, RecursionError):  # a torn line, or absurdly deep nesting
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if entry is None or not isinstance(blocks, list):
            continue
        blocks = [block for block in blocks if isinstance(block, dict)]
        if entry.get("type") == "assistant":
            inputs = [b.get("input") for b in blocks if b.get("name") == "Bash"]
            ran = [i.get("command") for i in inputs if isinstance(i, dict)]
            command = next((c for c in reversed(ran) if isinstance(c, str)), command)
            continue
        flags = ("isMeta", "isCompactSummary", "isSidechain", "isVisibleInTranscriptOnly")
        if entry.get("type") != "user" or any(entry.get(flag) for flag in flags):
            continue
        texts = [b.get("text") for b in blocks if b.get("type") == "text"]
        text = "\n".join(t for t in texts if isinstance(t, str)).strip()
        if not text or text.startswith(WRAPPERS):
            continue  # tool results only: the command they answer is still the one corrected
        uuid = entry.get("uuid")
        uuid = uuid if isinstance(uuid, str) and uuid else None
        found.append(Candidate(TRANSCRIPT, uuid, text, "The user corrected the agent", command))
        command = None
    return found


#: The memory entry types that can say what not to do, and the field holding their text.
TEXT_FIELDS = {"learning": "text", "preference": "text", "behavior": "text", "context": "content"}


def memory_candidates(project_root: str | os.PathLike[str] | None) -> list[Candidate]:
    """The live memory entries that may hold a prohibition, oldest first: the personal
    log's and, with `project_root`, the project's (the logs `MemoryStore` reads there)."""
    from ..memory.defaults import BEHAVIORS
    from ..memory.store import MemoryStore
    from ..paths import personal_log_path

    store = MemoryStore(project_root if project_root is not None else personal_log_path().parent)
    if project_root is None:
        store.project = None  # the personal log only, wherever VOYAGER_HOME is
    seeded = {text for _, text in BEHAVIORS}
    entries = store.snapshot().state.live()
    found: list[Candidate] = []
    # Oldest first; the sort is stable, so entries of the same second keep the log's order
    # (their ids are random: ordering by id shuffled them from run to run).
    for entry in sorted(entries, key=lambda e: str(e.get("created"))):
        kind, category = str(entry.get("type")), entry.get("category")
        text = entry.get(TEXT_FIELDS.get(kind, ""))
        if not isinstance(text, str) or not text.strip() or (kind == "behavior" and text in seeded):
            continue
        label = f"{kind} {entry.get('id')}" + (f", {category}" if kind == "behavior" else "")
        where, dont = f"From the memory log ({label})", kind == "behavior" and category == "dont"
        found.append(Candidate(MEMORY, str(entry.get("id")), text, where, None, dont))
    return found


# -- proposals ---------------------------------------------------------------------------


def offline_suggestions(candidates: Iterable[Candidate]) -> list[Suggestion]:
    """The proposals the heuristic finds in `candidates`, in their order."""
    found: list[Suggestion] = []
    for candidate in candidates:
        items = findings(candidate.text, candidate.previous_command)
        if not items and candidate.forbidden:
            # A dont behavior's text as a prohibition: "Use sudo" -> "Do not use sudo".
            text = candidate.text.strip().rstrip(".!")
            clause = text if PROHIBIT.match(text) else f"Do not {text[:1].lower()}{text[1:]}"
            items = [Finding(command_of(text), text, clause, None)]
        for item in items:
            try:
                found.append(_proposal(item, candidate))
            except RuleError:
                continue  # a command no safe pattern finds: better no proposal
    return found


def _proposal(finding: Finding, candidate: Candidate) -> Suggestion:
    alternative = finding.alternative
    solution = None
    if alternative:
        use = command_of(alternative)
        alternative = f"`{use}`" if use else alternative
        solution = f"Use {alternative} instead."
    quoted = finding.sentence if candidate.source == TRANSCRIPT else candidate.text
    problem = f'{candidate.where}: "{_clip(quoted)}"'
    if finding.command is None:
        clause = finding.clause.rstrip(".!")
        description = _clip(clause[:1].upper() + clause[1:])
        return _checked(description, None, None, problem, solution, candidate)
    description = f"Do not run `{finding.command}`"
    description += f"; use {alternative} instead" if alternative else ""
    pattern = command_pattern(finding.command)
    return _checked(description, pattern, "Bash", problem, solution, candidate)


def _checked(
    description: str,
    pattern: str | None,
    tool: str | None,
    problem: str | None,
    solution: str | None,
    candidate: Candidate,
) -> Suggestion:
    """The proposal, its texts clipped, once its fields pass the checks of
    `rules.add_rule` (`RuleError`)."""
    kind = "regex" if pattern else "semantic"
    check_fields(description=description, pattern=pattern, type=kind, action=ACTION, tool=tool)
    # A proposal quotes what it came from (a personal log may keep secrets): shown and
    # stored redacted. Redacted before it is clipped, so a secret cut short is still
    # recognised whole.
    description, problem, solution = redacted(description, problem, solution)
    problem, solution = (_clip(text) if text else None for text in (problem, solution))
    source, source_id = candidate.source, candidate.source_id
    return Suggestion(
        _clip(description), pattern, kind, ACTION, tool, problem, solution, source, source_id
    )


# -- the model ---------------------------------------------------------------------------

PROMPT = """\
Propose guard rules, checked before each tool call of a coding agent, for what the texts
below (a user's corrections of the agent, its memory) forbid. For a shell command give
"tool": "Bash" and a Python regex "pattern" for the command line, with word boundaries and
flexible whitespace (\\bpip\\s+install\\b); else "pattern": null (matched by meaning).
Answer with JSON only, [] when nothing is forbidden: a list of objects with the keys
"source" (the text's label, e.g. "T2"), "description" (what is forbidden, one sentence),
"pattern", "tool" (null: every tool), "problem" (why), "solution" (what instead, or null).

Texts:
{texts}
"""
#: A message or entry that can hold a prohibition says one of these words.
_CUE = re.compile(
    r"\b(?:never|don'?t|do not|avoid|stop|instead|rather|not|no|use|prefer|wrong)\b", re.I
)
#: At most this many texts of each source go to the model, the latest ones.
MODEL_TEXTS = 60


def model_suggestions(
    provider: Provider, candidates: Sequence[Candidate], warn: Warn | None = None
) -> list[Suggestion]:
    """What the model proposes for `candidates`, each checked like a rule from the command
    line (failing ones dropped, with a warning). `ProviderError` when it fails or its
    answer is not a JSON list."""
    from ..providers import ProviderError

    labelled: dict[str, Candidate] = {}
    for source, letter in ((TRANSCRIPT, "T"), (MEMORY, "M")):
        wanted = [c for c in candidates if c.source == source][-MODEL_TEXTS:]
        labelled.update((f"{letter}{n}", c) for n, c in enumerate(wanted, 1))
    texts = "\n".join(f"[{label}] {_clip(c.text, 1000)}" for label, c in labelled.items())
    items = _json_list(provider.complete(PROMPT.format(texts=texts)))
    if items is None:
        raise ProviderError("the model's answer is not a JSON list of rules")
    found: list[Suggestion] = []
    for n, item in enumerate(items, 1):
        try:
            found.append(_from_model(item, labelled))
        except RuleError as exc:
            if warn is not None:
                warn(f"the model's proposal {n} is dropped: {exc}")
    return found


def _json_list(answer: str) -> list[Any] | None:
    """The JSON list in a model's answer (bare, or in words or a code fence), or None."""
    try:
        value = json.loads(answer[answer.find("[") : answer.rfind("]") + 1])
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, list) else None


def _field(item: dict[str, Any], name: str) -> str | None:
    value = item.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise RuleError(f"{name}: expected a text, got {type(value).__name__}")
    return value


def _from_model(item: Any, labelled: dict[str, Candidate]) -> Suggestion:
    if not isinstance(item, dict):
        raise RuleError(f"expected an object, got {type(item).__name__}")
    candidate = labelled.get(str(item.get("source")))
    if candidate is None:
        raise RuleError(f"source: {item.get('source')!r} is none of the texts given")
    pattern, tool = _field(item, "pattern"), _field(item, "tool")
    problem = _field(item, "problem") or f'{candidate.where}: "{_clip(candidate.text)}"'
    description = _field(item, "description") or ""
    return _checked(description, pattern, tool, problem, _field(item, "solution"), candidate)


# -- suggest and accept ----------------------------------------------------------------------


def _keys(description: str, pattern: str | None) -> set[str]:
    keys = {f"semantic:{_normal(description)}"}
    return keys | {f"regex:{pattern}"} if pattern else keys


def unique(proposals: Iterable[Suggestion], rules: Iterable[Rule]) -> list[Suggestion]:
    """`proposals` without those repeating an earlier one or one of `rules` (the same
    pattern, or the same description without case and punctuation)."""
    seen = set().union(*(_keys(rule.description, rule.pattern) for rule in rules))
    kept: list[Suggestion] = []
    for proposal in proposals:
        if not (keys := _keys(proposal.description, proposal.pattern)) & seen:
            seen |= keys
            kept.append(proposal)
    return kept


def suggest(
    db: sqlite3.Connection,
    *,
    transcript: str | os.PathLike[str] | None = None,
    project_root: str | os.PathLike[str] | None = None,
    config: Config | None = None,
    warn: Warn | None = None,
) -> list[Suggestion]:
    """Rules proposed from the corrections in `transcript` (a Claude Code transcript)
    and the memory logs (the personal one, and the project's at `project_root`), in a
    stable order: the transcript's by message, then the memory's, oldest entry first;
    none like a rule in `db`, active or not. With ``config.model_command`` the model
    proposes; if it fails, the heuristic does (and `warn` is told why)."""
    candidates = read_transcript(transcript) if transcript is not None else []
    candidates += memory_candidates(project_root)
    proposals: list[Suggestion] | None = None
    if config is not None and config.model_command.strip():
        from ..providers import ProviderError, get_provider

        provider = get_provider(config)
        wanted = [c for c in candidates if c.forbidden or _CUE.search(c.text)]
        try:
            proposals = model_suggestions(provider, wanted, warn) if provider and wanted else []
        except ProviderError as exc:
            if warn is not None:
                warn(f"model failed ({exc}); using the offline heuristic")
    if proposals is None:
        proposals = offline_suggestions(candidates)
    return unique(proposals, list_rules(db, include_inactive=True))


def message_id(db: sqlite3.Connection, uuid: str) -> int | None:
    """The ``messages`` row of the transcript entry `uuid`, if the history has it."""
    row = db.execute("SELECT id FROM messages WHERE external_id = ?", (uuid,)).fetchone()
    return None if row is None else int(row[0])


def accept(
    db: sqlite3.Connection,
    suggestion: Suggestion,
    *,
    transcript: str | os.PathLike[str] | None = None,
) -> Rule:
    """Add `suggestion` as a global rule and return it; `RuleError` when a rule like it
    exists. A proposal from a transcript message records it as ``source_message_id``,
    importing `transcript` first when the history lacks the message (without it, or when
    the message is not found, the column stays NULL)."""
    if not unique([suggestion], list_rules(db, include_inactive=True)):
        raise RuleError(f"a rule like this exists already: {suggestion.description}")
    message = None
    if suggestion.source == TRANSCRIPT and suggestion.source_id:
        message = message_id(db, suggestion.source_id)
        if message is None and transcript is not None:
            import_transcript(db, os.fspath(transcript))
            message = message_id(db, suggestion.source_id)
    fields = ("description", "pattern", "type", "action", "tool", "problem", "solution")
    rule = {name: getattr(suggestion, name) for name in fields}
    return add_rule(db, **rule, source_message_id=message)
