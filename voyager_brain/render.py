"""Jinja templates: the built-in ones shipped with the package, overridable per project.

A project overrides a template by putting a file of the same name under
``.voyager/templates/`` (for example ``.voyager/templates/brain/section.md.j2``).

Importing Jinja costs more than everything else a hook does, so the two small brain.md
templates also have a plain-Python rendering, used only while the shipped template file
is exactly the text below and no override exists; a test holds both renderings to the
same output. Edit a template and Jinja renders it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import TemplateError

if TYPE_CHECKING:
    import jinja2


def builtin_template_dir() -> Path:
    """Where the built-in templates are: inside the installed wheel, or the source tree."""
    packaged = Path(__file__).parent / "templates"
    if packaged.is_dir():
        return packaged
    return Path(__file__).parent.parent / "templates"


@functools.lru_cache(maxsize=8)
def _environment(override_dir: Path | None) -> jinja2.Environment:
    import jinja2

    searchpath = [str(override_dir)] if override_dir is not None else []
    searchpath.append(str(builtin_template_dir()))
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(searchpath),
        autoescape=False,  # we render markdown, not HTML
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def _section(*, label: str, timestamp: str, source: str | None, body: str, **_: Any) -> str:
    head = f"## {label} — {timestamp}\n"
    return head + (f"<!-- source: {source} -->\n" if source else "") + body + "\n"


def _title(*, project: str, **_: Any) -> str:
    return f"# {project} Brain — Session Context\n"


#: name -> (the template text the Python rendering stands for, the rendering)
PYTHON_RENDERINGS: dict[str, tuple[str, Callable[..., str]]] = {
    "brain/section.md.j2": (
        "## {{ label }} — {{ timestamp }}\n"
        "{% if source %}<!-- source: {{ source }} -->\n"
        "{% endif %}{{ body }}\n",
        _section,
    ),
    "brain/title.md.j2": ("# {{ project }} Brain — Session Context\n", _title),
}


@functools.lru_cache(maxsize=16)
def _builtin_text(name: str) -> str | None:
    try:
        return (builtin_template_dir() / name).read_text(encoding="utf-8")
    except OSError:
        return None


class Templates:
    """The templates of one project (its overrides first, then the built-ins)."""

    def __init__(self, override_dir: Path | None = None) -> None:
        self.override_dir = (
            override_dir if override_dir is not None and override_dir.is_dir() else None
        )

    def render(self, name: str, **context: Any) -> str:
        fast = PYTHON_RENDERINGS.get(name)
        if (
            fast is not None
            and _builtin_text(name) == fast[0]
            and not (self.override_dir is not None and (self.override_dir / name).exists())
        ):
            return fast[1](**context)
        return self.render_with_jinja(name, **context)

    def render_with_jinja(self, name: str, **context: Any) -> str:
        import jinja2

        try:
            template = _environment(self.override_dir).get_template(name)
            return template.render(**context)
        except jinja2.TemplateError as exc:
            where = self.override_dir or builtin_template_dir()
            raise TemplateError(f"{where / name}: {exc}") from None

    def source_of(self, name: str) -> Path:
        """The file that `name` is read from."""
        if self.override_dir is not None and (self.override_dir / name).is_file():
            return self.override_dir / name
        return builtin_template_dir() / name
