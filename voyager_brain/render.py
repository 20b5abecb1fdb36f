"""Jinja templates: the built-in ones shipped with the package, overridable per project.

A project overrides a template by putting a file of the same name under
``.voyager/templates/`` (for example ``.voyager/templates/brain/section.md.j2``).

Importing Jinja costs more than everything else a hook does, so the small built-in
templates (brain.md's sections and title, the lines of the session-start context) also
have a plain-Python rendering, used only while the shipped template file is exactly the
text below and no override exists; a test holds both renderings to the same output.
Edit a template and Jinja renders it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

from . import confine
from .errors import TemplateError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    loader: jinja2.BaseLoader = jinja2.FileSystemLoader(str(builtin_template_dir()))
    if override_dir is not None:
        loader = jinja2.ChoiceLoader([jinja2.FunctionLoader(_override(override_dir)), loader])
    # An override comes from the repository, which may be a stranger's clone: Jinja's
    # sandbox keeps a template from Python's internals (``__globals__``, ``__class__``
    # and the like lead to os.system), and it costs our own templates nothing they use.
    return ImmutableSandboxedEnvironment(
        loader=loader,
        autoescape=False,  # we render markdown, not HTML
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def _override(folder: Path) -> Callable[[str], tuple[str, str, Callable[[], bool]] | None]:
    """A project's template overrides, read through the one checked read: a template
    linked out of the repository is refused (`UnsafePathError`), never rendered into a
    brain file."""
    from jinja2.loaders import split_template_path

    def load(name: str) -> tuple[str, str, Callable[[], bool]] | None:
        path = os.path.join(folder, *split_template_path(name))  # no "..": TemplateNotFound
        data = confine.read_bytes(path)
        if data is None:
            return None
        stamp = os.lstat(path).st_mtime_ns

        def uptodate() -> bool:
            try:
                return os.lstat(path).st_mtime_ns == stamp
            except OSError:
                return False

        return data.decode("utf-8"), path, uptodate

    return load


def _section(*, label: str, timestamp: str, source: str | None, body: str, **_: Any) -> str:
    head = f"## {label} — {timestamp}\n"
    return head + (f"<!-- source: {source} -->\n" if source else "") + body + "\n"


def _title(*, project: str, **_: Any) -> str:
    return f"# {project} Brain — Session Context\n"


# -- the session-start context (one candidate line each, see context.py) ----------------


_FOOTER = (
    "Record what you learn: `voyager-brain save` (project state), "
    '`voyager-brain brain action=add type=learning text="..."` (memory).\n'
)


def _header(*, project: str | None, date: str, **_: Any) -> str:
    return f"# Memory{f' for {project}' if project else ''} (voyager-brain) — {date}\n"


#: The project-state lines that are a label and a text.
_PROJECT_LABELS = {
    "goal": "Goal",
    "blocker": "Blocker",
    "in_progress": "In progress",
    "next_step": "Next",
    "stack": "Stack",
    "architecture": "Architecture",
    "fact": "Fact",
}


def _project_line(*, kind: str, **v: Any) -> str:
    match kind:
        case "decision":
            why = f" — {v['why']}" if v["why"] else ""
            when = f" ({v['when']})" if v["when"] else ""
            line = f"Decision: {v['what']}{why}{when}"
        case "known_issue":
            fix = f" — workaround: {v['workaround']}" if v["workaround"] else ""
            line = f"Known issue [{v['severity']}]: {v['issue']}{fix}"
        case "environment":
            line = f"Environment: {v['key']} = {v['value']}"
        case "key_file":
            role = f" — {v['role']}" if v["role"] else ""
            missing = " (missing from the working tree)" if v["missing"] else ""
            line = f"Key file: {v['path']}{role}{missing}"
        case _ if kind in _PROJECT_LABELS:
            line = f"{_PROJECT_LABELS[kind]}: {v['text']}"
        case _:
            return "\n"
    return line + "\n\n"


_RECALL = '`voyager-brain recall "words"`'


def _recall_line(*, left_out: list[dict[str, Any]], **_: Any) -> str:
    if not left_out:
        return f"Recall anything else from memory with {_RECALL}.\n"
    counts = ", ".join(f"{s['name']} {s['count']}" for s in left_out)
    return f"Left out for room: {counts}. Recall any of it with {_RECALL}.\n"


def _due_line(*, kind: str, text: str, **v: Any) -> str:
    if kind == "reminder":
        return f"Reminder due: {text}\n"
    return f"Task ({v['why']}): {text}\n"


#: name -> (the template text the Python rendering stands for, the rendering)
PYTHON_RENDERINGS: dict[str, tuple[str, Callable[..., str]]] = {
    "brain/section.md.j2": (
        "## {{ label }} — {{ timestamp }}\n"
        "{% if source %}<!-- source: {{ source }} -->\n"
        "{% endif %}{{ body }}\n",
        _section,
    ),
    "brain/title.md.j2": ("# {{ project }} Brain — Session Context\n", _title),
    "context/header.md.j2": (
        "# Memory{% if project %} for {{ project }}{% endif %} (voyager-brain) — {{ date }}\n",
        _header,
    ),
    "context/footer.md.j2": (_FOOTER, lambda **_: _FOOTER),
    "context/recall.md.j2": (
        "{% if left_out %}Left out for room: "
        "{% for s in left_out %}{{ s.name }} {{ s.count }}{% if not loop.last %}, {% endif %}"
        '{% endfor %}. Recall any of it with `voyager-brain recall "words"`.'
        '{% else %}Recall anything else from memory with `voyager-brain recall "words"`.'
        "{% endif %}\n",
        _recall_line,
    ),
    "context/title.md.j2": ("## {{ name }}\n", lambda *, name, **_: f"## {name}\n"),
    "context/warning.md.j2": (
        "> Warning: {{ text }}\n",
        lambda *, text, **_: f"> Warning: {text}\n",
    ),
    "context/keyed.md.j2": (
        "- {{ key }}: {{ value }}\n",
        lambda *, key, value, **_: f"- {key}: {value}\n",
    ),
    "context/behavior.md.j2": (
        "- {{ label }}: {{ text }}\n",
        lambda *, label, text, **_: f"- {label}: {text}\n",
    ),
    "context/preference.md.j2": (
        "- [{{ category }}] {{ text }}\n",
        lambda *, category, text, **_: f"- [{category}] {text}\n",
    ),
    "context/context.md.j2": ("{{ line }}\n", lambda *, line, **_: f"{line}\n"),
    "context/session.md.j2": (
        "{{ label }} ({{ timestamp }}): {{ text }}\n",
        lambda *, label, timestamp, text, **_: f"{label} ({timestamp}): {text}\n",
    ),
    "context/learning.md.j2": ("- {{ text }}\n", lambda *, text, **_: f"- {text}\n"),
    "context/due.md.j2": (
        '{% if kind == "reminder" %}Reminder due: {{ text }}'
        "{% else %}Task ({{ why }}): {{ text }}{% endif %}\n",
        _due_line,
    ),
    "context/project.md.j2": (
        '{% if kind == "goal" %}Goal: {{ text }}\n'
        '{% elif kind == "blocker" %}Blocker: {{ text }}\n'
        '{% elif kind == "in_progress" %}In progress: {{ text }}\n'
        '{% elif kind == "next_step" %}Next: {{ text }}\n'
        '{% elif kind == "decision" %}Decision: {{ what }}{% if why %} — {{ why }}{% endif %}'
        "{% if when %} ({{ when }}){% endif %}\n"
        '{% elif kind == "known_issue" %}Known issue [{{ severity }}]: {{ issue }}'
        "{% if workaround %} — workaround: {{ workaround }}{% endif %}\n"
        '{% elif kind == "stack" %}Stack: {{ text }}\n'
        '{% elif kind == "architecture" %}Architecture: {{ text }}\n'
        '{% elif kind == "environment" %}Environment: {{ key }} = {{ value }}\n'
        '{% elif kind == "fact" %}Fact: {{ text }}\n'
        '{% elif kind == "key_file" %}Key file: {{ path }}{% if role %} — {{ role }}{% endif %}'
        "{% if missing %} (missing from the working tree){% endif %}\n"
        "{% endif %}\n",
        _project_line,
    ),
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
        # name -> its Python rendering, or None for Jinja; decided once per name (a
        # context renders hundreds of lines).
        self._fast: dict[str, Callable[..., str] | None] = {}

    def render(self, name: str, /, **context: Any) -> str:
        if name not in self._fast:
            self._fast[name] = self._python_rendering(name)
        fast = self._fast[name]
        if fast is not None:
            return fast(**context)
        return self.render_with_jinja(name, **context)

    def _python_rendering(self, name: str) -> Callable[..., str] | None:
        fast = PYTHON_RENDERINGS.get(name)
        if (
            fast is not None
            and _builtin_text(name) == fast[0]
            and not (self.override_dir is not None and (self.override_dir / name).exists())
        ):
            return fast[1]
        return None

    def render_with_jinja(self, name: str, /, **context: Any) -> str:
        import jinja2
        from jinja2.exceptions import SecurityError

        try:
            template = _environment(self.override_dir).get_template(name)
            return template.render(**context)
        except SecurityError as exc:
            raise TemplateError(
                f"{self.source_of(name)}: refused, unsafe in a template ({exc});"
                " templates may use their variables, filters and loops only"
            ) from None
        except jinja2.TemplateError as exc:
            where = self.override_dir or builtin_template_dir()
            raise TemplateError(f"{where / name}: {exc}") from None

    def source_of(self, name: str) -> Path:
        """The file that `name` is read from."""
        if self.override_dir is not None and (self.override_dir / name).is_file():
            return self.override_dir / name
        return builtin_template_dir() / name


# -- HTML (the dashboard) ----------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _html_environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(builtin_template_dir() / "ui")),
        # Everything shown comes from files agents wrote: escape it all, always.
        autoescape=True,
        # Items of brain.json and the logs may lack optional fields: a missing one
        # shows as nothing, as it does in the text commands.
        undefined=jinja2.Undefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(name: str, /, **context: Any) -> str:
    """The dashboard page `name` (a file of ``templates/ui/``), every value escaped.
    The dashboard's templates are the product's, not a project's: no overrides."""
    import jinja2

    try:
        return _html_environment().get_template(name).render(**context)
    except jinja2.TemplateError as exc:
        raise TemplateError(f"{builtin_template_dir() / 'ui' / name}: {exc}") from None
