"""The session brain's lifecycle (seed 002): `BrainManager` over ``.voyager/brain.md``
and the project state in ``.voyager/brain.json`` (seed 000).

::

    session_start   -> load()      read brain.md, inject its content
    turn_end        -> update()    add an entry in memory
    session_compact -> compact()   summarize and prune, rewrite the file
    session_end     -> persist()   write what this session added

`update()` adds brain.md entries; `merge_state()` is its counterpart for brain.json.

Nothing is lost when the file changes under a running session (another agent, a
``git checkout``, a person): `persist()` and `compact()` re-read it under the lock and
merge. Entries added elsewhere stay, entries removed elsewhere stay removed, and this
session's additions and removals are applied on top. An entry's identity is its type,
timestamp and content.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from .. import conflicts, repo, storage
from ..config import Config, default_config_toml, load_config
from ..errors import StateError
from ..render import Templates
from ..state import brainjson as project_state
from ..state.brainjson import ProjectState
from ..state.validate import validate as validate_state
from ..timestamps import format_timestamp, parse_timestamp
from . import brainfile
from .brainfile import BrainDocument
from .model import BrainEntry, BrainState, BrainStatus, CompactionReport, estimate_tokens

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..context.build import ContextDocument
    from ..context.recall import RecallHit
    from ..memory.log import Folded
    from ..memory.view import MemoryView

Clock = Callable[[], datetime]

GITIGNORE = """\
# Local files of voyager-brain: locks, caches, files moved aside by `doctor --repair`
# and the lines `memory gc` could not read.
*.lock
cache/
*.corrupt
*.rejected
.*.tmp
"""


def utc_now() -> datetime:
    return datetime.now(UTC)


def _brain_md_entries(data: bytes, path: Path) -> Sequence[BrainEntry]:
    """brain.md's entries, for recall (which sits below this package)."""
    return brainfile.parse(data, path).entries


def ensure_layout(voyager_dir: Path) -> list[Path]:
    """Create ``.voyager/`` with its config.toml and .gitignore when missing.

    Returns the files it created; existing files are never touched.
    """
    voyager_dir.mkdir(parents=True, exist_ok=True)
    created = []
    for name, text in ((".gitignore", GITIGNORE), ("config.toml", default_config_toml())):
        path = voyager_dir / name
        if not path.exists() and storage.create(path, text.encode()):
            created.append(path)
    return created


def _last_compaction(doc: BrainDocument) -> datetime | None:
    value = doc.meta.get("last_compaction")
    if isinstance(value, datetime):  # YAML reads an unquoted time as a datetime
        return value.astimezone(UTC)
    try:
        return parse_timestamp(str(value)) if value else None
    except ValueError:
        return None


def redacted_head(doc: BrainDocument) -> BrainDocument:
    """`doc` with the secrets redacted in the text before its first entry (front matter,
    title, hand-written preamble): tracked by git as much as the entries are. The same
    document when there are none (checked cheaply first: this runs on every write)."""
    from ..redact import might_hold_secret, redact, redact_json

    texts = [doc.heading or "", doc.preamble or "", doc.project or ""]
    texts += [str(value) for value in doc.meta.values()]
    if not might_hold_secret("\n".join(texts)):
        return doc
    fixed = doc.replace(
        heading=doc.heading and redact(doc.heading),
        preamble=doc.preamble and redact(doc.preamble),
        project=doc.project and redact(doc.project),
        meta=redact_json(dict(doc.meta)),
    )
    return doc if fixed == doc else fixed


class BrainManager:
    """The session brain of one repository.

    `root` may be any folder inside the repository; the brain lives at the repository's
    top, in ``.voyager/brain.md``. Outside a repository, `root` itself is the top.
    `config` is a `Config`, a mapping of config.toml keys, or None to read config.toml.
    `clock` returns the current time (tests pass a fixed one).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        *,
        config: Config | Mapping[str, Any] | None = None,
        clock: Clock | None = None,
    ) -> None:
        start = Path(root).expanduser().absolute()
        self.root: Path = start
        self.top: Path = repo.find_top(start) or start
        self.voyager_dir: Path = self.top / ".voyager"
        self.path: Path = self.voyager_dir / "brain.md"
        self.state_path: Path = self.voyager_dir / "brain.json"
        if config is None:
            config = load_config(self.voyager_dir)
        elif not isinstance(config, Config):
            config = Config.from_mapping(config)
        self.config: Config = config
        self.clock: Clock = clock or utc_now
        self.templates = Templates(self.voyager_dir / "templates")
        self._loaded = False
        self._reset(BrainDocument(), None, 0)
        self._reset_state(None)
        # sessionCount goes up once per BrainManager session that saves project state.
        self._session_counted = False

    # -- state ------------------------------------------------------------------------

    def _reset(self, doc: BrainDocument, data: bytes | None, chars: int) -> None:
        """Make `doc` (whose file bytes are `data`) the base this session merges against."""
        self._doc = doc
        # The bytes as read or written, to tell whether anyone changed the file since.
        self._data = data
        self._chars = chars
        self._entries: list[BrainEntry] = list(doc.entries)
        self._keys = {e.key for e in doc.entries}
        self._base_keys = set(self._keys)

    def _reset_state(self, document: dict[str, Any] | None) -> None:
        """Make `document` (None: no brain.json yet) the project state merged against."""
        self._state_base = document
        self._state_view: dict[str, Any] | None = document
        self._state_updates: list[dict[str, Any]] = []

    @property
    def entries(self) -> tuple[BrainEntry, ...]:
        """The entries as this session sees them, in file order."""
        return tuple(self._entries)

    @property
    def project(self) -> str:
        """The project name: brain.md's title, else brain.json's `project`, else detected
        from the repository (manifests, the git remote, the folder name)."""
        if self._doc.project is None:
            self._doc = self._doc.replace(project=self._project_name(None, self._state_base))
        assert self._doc.project is not None
        return self._doc.project

    def _project_name(self, title: str | None, state: Mapping[str, Any] | None) -> str:
        stored = (state or {}).get("project")
        name = title or (stored if isinstance(stored, str) and stored else None)
        return name or repo.detect_project_name(self.top)

    @property
    def last_compaction(self) -> datetime | None:
        """When brain.md was last compacted (its front matter), None if never."""
        return _last_compaction(self._doc)

    def _read_disk(self) -> tuple[BrainDocument, bytes | None, str]:
        """(document, bytes, text) of brain.md as it is now; empty when missing."""
        data = storage.read_bytes(self.path)
        if data is None:
            return BrainDocument(), None, ""
        text = brainfile.decode_text(data, self.path)
        return brainfile.parse(text, self.path), data, text

    def _read_state(self) -> dict[str, Any] | None:
        data = storage.read_bytes(self.state_path)
        return None if data is None else project_state.loads(data, self.state_path)

    def _brain_state(self, content: str) -> BrainState:
        stamps = [e.timestamp for e in self._entries if e.timestamp is not None]
        return BrainState(
            content=content,
            last_updated=max(stamps) if stamps else None,
            entry_count=len(self._entries),
            compacted=self.last_compaction is not None,
            entries=tuple(self._entries),
        )

    # -- the lifecycle ----------------------------------------------------------------

    def load(self) -> BrainState:
        """Read brain.md (session_start). A missing file is an empty, uncompacted brain.

        Raises `CorruptFileError` when the file cannot be read; it is left untouched.
        """
        doc, data, text = self._read_disk()
        self._reset(doc, data, len(text))
        self._reset_state(self._read_state())
        self._loaded = True
        return self._brain_state(text)

    def update(self, entry: BrainEntry) -> None:
        """Add `entry` to the brain in memory (turn_end).

        An entry without a timestamp is stamped from the clock; secrets in its content are
        redacted now, so what is compared and merged is what will be written. Adding an
        entry that is already there (same type, timestamp and content) changes nothing.
        """
        if not self._loaded:
            self.load()
        if entry.timestamp is None:
            entry = entry.replace(timestamp=self.clock())
        if self.config.redact_secrets:
            from ..redact import redact  # compiles its patterns; not needed to load

            source = redact(entry.source) if entry.source else entry.source
            entry = entry.replace(content=redact(entry.content), source=source)
        if entry.key not in self._keys:
            self._keys.add(entry.key)
            self._entries.append(entry)

    def remove(self, entry: BrainEntry) -> bool:
        """Remove the entry with `entry`'s identity from memory; False when absent.

        `persist()` then removes it from the file too, even if other sessions wrote since.
        """
        if not self._loaded:
            self.load()
        if entry.key not in self._keys:
            return False
        self._keys.discard(entry.key)
        self._entries = [e for e in self._entries if e.key != entry.key]
        return True

    def persist(self, *, redact_head: bool = False) -> None:
        """Write this session's changes to brain.md (session_end).

        Creates ``.voyager/`` and its files when missing. Merges with whatever is on disk
        now; compacts first when auto_compact is on and the file is over the budget. Then
        brain.json: this session's `merge_state()` updates are applied again, under the
        lock, to the state on disk, so concurrent sessions' saves combine by the rules.
        The text before the first entry is redacted as the entries are (`redact_secrets`),
        or whatever the setting with `redact_head` (``doctor --repair``).
        """
        self._commit(force_compact=False, redact_head=redact_head)
        self._commit_state()

    def compact(self) -> CompactionReport:
        """Summarize and prune (session_compact), then rewrite brain.md.

        See `voyager_brain.session.compaction` for the rules. The time is recorded as
        ``last_compaction`` in the front matter when anything changed.
        """
        report = self._commit(force_compact=True)
        assert report is not None
        self._commit_state()
        return report

    def get_status(self) -> BrainStatus:
        """Where the brain is, how big, how many entries, when it was last compacted.

        Before `load()` it describes the file on disk; after, this session's brain."""
        if self._loaded:
            doc = self._doc.replace(entries=tuple(self._entries))
        else:
            doc = self._read_disk()[0]
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        return BrainStatus(self._loaded, self.path, size, len(doc.entries), _last_compaction(doc))

    # -- the session-start context ----------------------------------------------------

    def context(self, budget: int | None = None) -> str:
        """The document to inject at session start: the memory logs, brain.json and
        brain.md, within `budget` tokens (default: prompt_budget in config.toml)."""
        return self.context_document(budget, explain=False).text

    def context_document(
        self, budget: int | None = None, *, explain: bool = True
    ) -> ContextDocument:
        """`context()` with the record of every candidate line (for ``--explain``; without
        `explain`, only of the lines that were looked at)."""
        from ..context.build import build_context
        from ..memory.store import MemoryStore

        store = MemoryStore(self.root, clock=self.clock)
        store.seed_personal()
        in_project = self.voyager_dir.is_dir()
        entries: Sequence[BrainEntry | brainfile.Section] = ()
        state, project = None, None
        # A brain file an unresolved merge left conflicted is read without its conflicted
        # regions (a brain.json without itself), and the document says so.
        warnings: list[str] = []
        if in_project and self._loaded:
            entries, state, project = self._entries, self._current_state(), self.project
        elif in_project:
            # Not loaded (a session start): the context shows a few sections of brain.md,
            # so they are found by the heading scan and only those decoded.
            data = storage.read_bytes(self.path) or b""
            regions = conflicts.find(data)
            if regions:
                warnings.append(self._conflict_warning(self.path, regions, "left out"))
                data = conflicts.without(data)
            title, entries = brainfile.sections(data, self.path)
            try:
                state = self._read_state()
            except conflicts.ConflictError as exc:
                warnings.append(
                    self._conflict_warning(
                        self.state_path, [exc.region], "the project state left out"
                    )
                )
            project = self._project_name(title, state)
            state = state or project_state.empty_state(project, self.clock())
        memory: MemoryView | Folded
        try:
            memory = store.view()
        except conflicts.ConflictError:
            memory, found = store.folded_leaving_out_conflicts()
            warnings += [self._conflict_warning(e.path, [e.region], "left out") for e in found]
        return build_context(
            memory=memory,
            state=state,
            entries=entries,
            cwd=self.root,
            top=self.top if in_project else None,
            project=project,
            now=self.clock(),
            budget_tokens=budget or self.config.prompt_budget,
            chars_per_token=self.config.chars_per_token,
            explain=explain,
            templates=self.templates,
            warnings=warnings,
        )

    def _conflict_warning(self, path: Path, regions: Sequence[Any], what: str) -> str:
        where = path.relative_to(self.top) if path.is_relative_to(self.top) else path
        lines = ", ".join(f"{r.start}-{r.end}" for r in regions)
        return (
            f"{where} (lines {lines}) holds an unresolved git conflict, {what}; "
            "`voyager-brain doctor --repair` merges both sides"
        )

    def recall(self, query: str, limit: int = 10) -> list[RecallHit]:
        """The best matches for `query` in every store at once: brain.md's entries and
        compaction summaries, brain.json's sections, both memory logs. Each hit has its
        source, kind, id or key, date and a one-line excerpt; BM25 ranks them, the newer
        first on a tie. See `voyager_brain.context.recall` (the index in ``cache/``)."""
        from ..context.recall import recall

        return recall(
            self.top,
            query,
            limit,
            parse_brain_md=_brain_md_entries,
            lock_timeout=self.config.lock_timeout_seconds,
        )

    # -- the project state (brain.json) ---------------------------------------------

    @property
    def state(self) -> ProjectState:
        """The project state as this session sees it (brain.json plus pending updates)."""
        if not self._loaded:
            self.load()
        return ProjectState(self._current_state())

    def _current_state(self) -> dict[str, Any]:
        if self._state_view is None:
            self._state_view = project_state.empty_state(self.project, self.clock())
        return self._state_view

    def merge_state(self, update: Mapping[str, Any]) -> ProjectState:
        """Merge a partial brain.json (any subset of its fields) into the project state
        in memory, by the seed's per-field rules; `persist()` writes it.

        Raises `StateError` (field path and what was expected) for a bad update, leaving
        the state as it was. Strings are redacted for secrets first. Unknown fields are
        kept; `voyager_brain.state.validate` lists them.
        """
        if not self._loaded:
            self.load()
        try:
            validate_state(update, "update")
            if self.config.redact_secrets:
                from ..redact import redact_json

                redacted = redact_json(dict(update))
                assert isinstance(redacted, dict)  # a dict comes back as a dict
                update = redacted
            first = not self._state_updates and not self._session_counted
            merged = project_state.merge(
                self._current_state(), update, now=self.clock(), new_session=first
            )
        except RecursionError:
            # Checking, redacting and merging recurse once per level of nesting: an
            # update (or a brain.json) that JSON could read may still be too deep here.
            raise StateError(
                f"{self.state_path}: the update or the state is nested too deeply to merge;"
                " expected a flatter document"
            ) from None
        self._state_view = merged
        self._state_updates.append(dict(update))
        return ProjectState(self._state_view)

    def _commit_state(self) -> None:
        """Write brain.json: create it when missing, else replay this session's updates
        on the state on disk, under the lock."""
        if not self._state_updates and self.state_path.exists():
            return
        with storage.locked(self.state_path, self.config.lock_timeout_seconds):
            data = storage.read_bytes(self.state_path)
            now = self.clock()
            if data is None:
                result = project_state.empty_state(self.project, now)
            else:
                result = project_state.loads(data, self.state_path)
            for n, update in enumerate(self._state_updates):
                first = n == 0 and not self._session_counted
                result = project_state.merge(result, update, now=now, new_session=first)
            blob = project_state.dumps(result).encode()
            if blob != data:
                storage.atomic_write(self.state_path, blob)
        self._session_counted = self._session_counted or bool(self._state_updates)
        self._reset_state(result)

    # -- writing ----------------------------------------------------------------------

    def _merged_with(self, disk: BrainDocument) -> list[BrainEntry]:
        """Disk's entries with this session's additions and removals applied."""
        mine = self._keys
        removed = self._base_keys - mine
        result = [e for e in disk.entries if e.key not in removed]
        present = {e.key for e in result}
        result += [
            e for e in self._entries if e.key not in self._base_keys and e.key not in present
        ]
        return result

    def _commit(self, *, force_compact: bool, redact_head: bool = False) -> CompactionReport | None:
        if not self._loaded:
            self.load()
        if not (self.voyager_dir / ".gitignore").exists():
            ensure_layout(self.voyager_dir)
        with storage.locked(self.path, self.config.lock_timeout_seconds):
            data = storage.read_bytes(self.path)
            unchanged = data == self._data
            if unchanged:
                disk, chars = self._doc, self._chars
                entries = self._entries
            else:
                disk, data, text = self._read_disk()
                chars = len(text)
                entries = self._merged_with(disk)
            additions = [e for e in entries if e.key not in self._base_keys]
            doc = disk.replace(entries=tuple(entries), project=disk.project or self.project)
            if self.config.redact_secrets or redact_head:
                clean = redacted_head(doc)
                if clean is not doc:  # a secret above the entries: the file is rewritten
                    doc, unchanged = clean, False

            grown = chars + sum(len(e.content) + 40 for e in additions)
            report = None
            if force_compact or (
                self.config.auto_compact and grown > self.config.compact_budget_chars
            ):
                text, doc, report = self._compact_render(doc)
            elif (
                unchanged
                and data is not None
                and disk.appendable
                and disk.project is not None
                and len(entries) == len(self._base_keys) + len(additions)
            ):
                # Only additions to a file nobody touched: append them, don't re-render.
                if additions:
                    text = brainfile.render_sections(additions, self.templates)
                    storage.append(self.path, text.encode())
                    self._reset(doc, data + text.encode(), chars + len(text))
                return None
            else:
                text = brainfile.render(doc, self.templates)

            new_data = text.encode()
            if new_data != data:
                storage.atomic_write(self.path, new_data)
            self._reset(doc, new_data, len(text))
            if report is not None:
                report = report._replace(bytes_before=len(data or b""), bytes_after=len(new_data))
            return report

    def _compact_render(self, doc: BrainDocument) -> tuple[str, BrainDocument, CompactionReport]:
        """Compact `doc`; return the new file text, the new document and the report."""
        from ..providers import get_provider
        from .compaction import compact_entries
        from .summarizer import get_summarizer

        sections: dict[tuple[str, str, str], str] = {}

        def section(entry: BrainEntry) -> str:
            text = sections.get(entry.key)
            if text is None:
                text = sections[entry.key] = "\n" + brainfile.render_section(entry, self.templates)
            return text

        stamped = doc.replace(meta={**doc.meta, "last_compaction": format_timestamp(self.clock())})
        head = brainfile.render_head(doc, self.templates)
        before = len(head) + sum(len(section(e)) for e in doc.entries)
        result = compact_entries(
            doc.entries,
            budget_chars=self.config.compact_budget_chars,
            fixed_chars=len(brainfile.render_head(stamped, self.templates)),
            section_chars=lambda e: len(section(e)),
            summarizer=get_summarizer(self.config.summarizer, get_provider(self.config)),
        )
        entries_before = len(doc.entries)
        if result.entries != doc.entries:
            doc = stamped.replace(entries=result.entries)
            head = brainfile.render_head(doc, self.templates)
        text = head + "".join(section(e) for e in doc.entries)
        cpt = self.config.chars_per_token
        report = CompactionReport(
            entries_before=entries_before,
            entries_after=len(doc.entries),
            kept=len(doc.entries) - (1 if result.summary else 0),
            merged=result.merged,
            superseded=result.superseded,
            summarized=result.summarized,
            removed=result.merged + result.superseded + result.summarized,
            summary=result.summary,
            bytes_before=0,
            bytes_after=0,
            tokens_before=math.ceil(before / cpt),
            tokens_after=estimate_tokens(text, cpt),
            budget_tokens=self.config.compact_budget_tokens,
        )
        return text, doc, report


def recall_anywhere(folder: Path, query: str, limit: int = 10) -> list[RecallHit]:
    """`BrainManager.recall` in the repository `folder` is in; outside one, the
    personal memory log alone, which needs no repository."""
    if repo.find_top(folder) is not None:
        return BrainManager(folder).recall(query, limit)
    from ..context.recall import recall

    return recall(folder.absolute(), query, limit, parse_brain_md=_brain_md_entries)
