"""`voyager-brain trust`: which projects' config files may make voyager-brain run a program.

A project's ``.voyager/config.toml`` comes with the repository, from whoever wrote it.
Its command keys (`config.command_keys`: ``model_command``, ``summarizer = "model"``,
``semantic_review = true``, ``[pipeline] runner`` and ``[pipeline.runners]``) apply
only once the user trusts the file, as direnv's ``allow`` and Codex's project trust
do: ``$VOYAGER_HOME/trust.json`` maps the file's resolved path to the sha256 of the
content trusted, so any change to it needs trusting again. `config.load_config` reads
the store; this module writes it, under the storage lock, atomically, in a fixed order.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from . import storage
from .config import Config, command_keys, file_digest, trusted_files
from .errors import ConfigError
from .paths import trust_file
from .tomlfile import read_toml_raw
from .value import Record

_VERSION = 1


class TrustReport(Record):
    """A project config file as `trust` sees it: where it is (resolved), whether it
    exists, its sha256, its command keys with their values, whether it is trusted as it
    is now, and whether the store changed."""

    path: str
    exists: bool
    sha256: str | None
    commands: tuple[tuple[str, Any], ...]
    trusted: bool
    changed: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "exists": self.exists,
            "sha256": self.sha256,
            "commands": [{"key": key, "value": value} for key, value in self.commands],
            "trusted": self.trusted,
            "changed": self.changed,
        }


def config_file(top: str | os.PathLike[str]) -> str:
    """The project's config.toml, resolved (the path a trust is recorded under)."""
    return os.path.realpath(os.path.join(os.fspath(top), ".voyager", "config.toml"))


def inspect(top: str | os.PathLike[str]) -> TrustReport:
    """The project's config.toml and its trust, changing nothing. `ConfigError` when the
    file cannot be read or holds a wrong value: nobody can review such a file."""
    path = config_file(top)
    if not os.path.isfile(path):
        return TrustReport(path, False, None, (), False)
    data, raw = read_toml_raw(path)
    Config.from_mapping(data, path)  # a file with errors is fixed first, not trusted
    digest = file_digest(raw)
    commands = tuple(command_keys(data))
    return TrustReport(path, True, digest, commands, trusted_files().get(path) == digest)


def trust(top: str | os.PathLike[str]) -> TrustReport:
    """Trust the project's config.toml as it is now. Nothing is recorded for a file that
    is missing or holds no command key: there is nothing it could make us run."""
    report = inspect(top)
    if not report.commands or report.trusted:
        return report
    assert report.sha256 is not None
    digest = report.sha256

    def add(trusted: dict[str, str]) -> None:
        trusted[report.path] = digest

    _update(add)
    return report._replace(trusted=True, changed=True)


def revoke(top: str | os.PathLike[str]) -> TrustReport:
    """Forget the trust of the project's config.toml (its command keys are ignored again);
    works on a file that is gone or broken, too."""
    path = config_file(top)
    try:
        report = inspect(top)
    except ConfigError:
        report = TrustReport(path, True, None, (), False)
    removed: list[str] = []

    def drop(trusted: dict[str, str]) -> None:
        if trusted.pop(path, None) is not None:
            removed.append(path)

    _update(drop)
    return report._replace(trusted=False, changed=bool(removed))


def _update(change: Any) -> None:
    """Apply `change` to the trusted files under the store's lock; write the store only
    when it changed."""
    store = Path(trust_file())
    with storage.locked(store):
        raw = storage.read_bytes(store)
        trusted: dict[str, str] = {}
        if raw is not None:
            try:
                data = json.loads(raw)
            except ValueError:
                data = None
            if not isinstance(data, dict) or not isinstance(data.get("trusted"), dict):
                raise ConfigError(
                    f"{store}: expected a JSON object with a 'trusted' table of path ->"
                    " sha256; fix it, or delete it to trust nothing"
                )
            given = data["trusted"].items()
            trusted = {k: v for k, v in given if isinstance(k, str) and isinstance(v, str)}
        before = dict(trusted)
        change(trusted)
        if trusted == before and raw is not None:
            return
        document = {"version": _VERSION, "trusted": dict(sorted(trusted.items()))}
        storage.atomic_write(store, (json.dumps(document, indent=2) + "\n").encode())


def shown(value: Any) -> str:
    """A command key's value as `trust` shows it: TOML-like, every character a terminal
    could hide (control, bidirectional, zero-width) spelled as an escape."""
    text = json.dumps(value, ensure_ascii=False)
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)
