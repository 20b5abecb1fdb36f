"""The few exceptions voyager-brain raises.

Every error a user can cause is a `BrainError`: its message is one line that names the
file (and line or field) and says what was expected. The CLI prints it and exits 2; hooks
print it and exit 0. Anything else escaping the library is a bug.
"""

from __future__ import annotations

# typing.TYPE_CHECKING without importing typing (or pathlib): hooks pay for every import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


#: What `str.splitlines` breaks a line at, each written as its escape by `one_line`.
_BREAKS = {
    ord(c): f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
    for c in "\v\f\x1c\x1d\x1e\x85\u2028\u2029"
} | {ord("\n"): "\\n", ord("\r"): "\\r"}


def one_line(message: str) -> str:
    """`message` kept to one line: a line break in it (a path or an argument it quotes
    can hold one: a newline, a vertical tab, a form feed, U+2028 ...) written as its
    escape."""
    return message.translate(_BREAKS)


class BrainError(Exception):
    """Base class: a problem the user can fix, described in one line."""


class InvalidEntryError(BrainError, ValueError):
    """A value given to the API (an entry type, a timestamp, a source) is not acceptable."""


class NotInRepositoryError(BrainError):
    """A command that needs a git repository was run outside one."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path}: not inside a git repository (run `git init` first, or pass --root)"
        )
        self.path = path


class CorruptFileError(BrainError):
    """A brain file cannot be read; it is never overwritten while in this state."""

    def __init__(self, path: Path, detail: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {detail}")
        self.path = path
        self.line = line
        self.detail = detail


class StateError(BrainError, ValueError):
    """A brain.json update (or file) has a field of the wrong type or value. `field` is
    the path of that field (``decisions[0].what``), None when the whole document is."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class EntryError(BrainError, ValueError):
    """A memory-log entry breaks the schema registry; it is never written."""


class ConfigError(BrainError):
    """config.toml cannot be parsed, or a key has a value of the wrong type."""


class LockTimeoutError(BrainError):
    """Another process held a brain file's lock for longer than the configured timeout."""


class TemplateError(BrainError):
    """A template (built-in or from .voyager/templates/) renders something we cannot read back."""


class MergeError(BrainError):
    """The merge driver cannot merge a file: not one of the brain files, or (a bug) its
    own result does not read back; git then leaves the conflict for a person."""


class GitError(BrainError):
    """git could not answer: an unknown revision, a history it cannot read."""


class HistoryError(BrainError):
    """history.db cannot be used: corrupt, locked past the timeout, or written by a newer
    voyager-brain (never changed then)."""


class RuleError(BrainError, ValueError):
    """A guard rule (from the command line, rules.toml or the database) is not valid: a
    bad regex, an unknown action, a pattern that could stall a check."""


class UnsafePathError(BrainError):
    """A file voyager-brain would read or write is not a plain file of the repository:
    a symbolic link (or a folder on its way that is one), a FIFO, a device, or, in the
    personal folder, a link to a missing file. Nothing is read from it or written to it."""

    def __init__(self, path: object, detail: str) -> None:
        super().__init__(f"{path}: {detail}")
        self.path = path
        self.detail = detail
