"""Templates: built-ins, per-project overrides, and the plain-Python renderings of the
brain.md templates held to Jinja's output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain.render import PYTHON_RENDERINGS, Templates, builtin_template_dir


def test_python_renderings_stand_for_the_shipped_templates() -> None:
    for name, (text, _) in PYTHON_RENDERINGS.items():
        assert (builtin_template_dir() / name).read_text(encoding="utf-8") == text, name


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@given(label=_text, timestamp=_text, source=st.one_of(st.none(), _text), body=_text)
def test_section_rendering_equals_jinja(
    label: str, timestamp: str, source: str | None, body: str
) -> None:
    context = {"label": label, "type": "x", "timestamp": timestamp, "source": source, "body": body}
    templates = Templates()
    assert templates.render("brain/section.md.j2", **context) == templates.render_with_jinja(
        "brain/section.md.j2", **context
    )


@given(project=_text)
def test_title_rendering_equals_jinja(project: str) -> None:
    templates = Templates()
    assert templates.render("brain/title.md.j2", project=project) == (
        templates.render_with_jinja("brain/title.md.j2", project=project)
    )


def test_an_override_is_rendered_by_jinja(tmp_path: Path) -> None:
    (tmp_path / "brain").mkdir()
    (tmp_path / "brain" / "title.md.j2").write_text(
        "# {{ project | upper }} Brain — Session Context\n"
    )
    assert Templates(tmp_path).render("brain/title.md.j2", project="p") == (
        "# P Brain — Session Context\n"
    )
    assert (
        Templates(tmp_path).render(
            "brain/section.md.j2", label="Decision", timestamp="t", source=None, body="b"
        )
        == "## Decision — t\nb\n"
    )


def test_persisting_without_overrides_does_not_import_jinja(repo: Path) -> None:
    code = (
        "import sys\nfrom voyager_brain import BrainManager, BrainEntry\n"
        f"bm = BrainManager({str(repo)!r})\n"
        "bm.update(BrainEntry('observation', 'x'))\nbm.persist()\n"
        "print('jinja2' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


_maybe = st.one_of(st.just(""), _text)
# The values each context template is given (see voyager_brain/context/build.py).
_CONTEXT_VALUES = {
    "context/header.md.j2": st.fixed_dictionaries(
        {"project": st.one_of(st.none(), _text), "date": _text}
    ),
    "context/footer.md.j2": st.just({}),
    "context/recall.md.j2": st.fixed_dictionaries(
        {
            "left_out": st.lists(
                st.fixed_dictionaries(
                    {"section": _text, "name": _text, "count": st.integers(1, 10**6)}
                ),
                max_size=4,
            )
        }
    ),
    "context/title.md.j2": st.fixed_dictionaries({"name": _text}),
    "context/warning.md.j2": st.fixed_dictionaries({"text": _text}),
    "context/keyed.md.j2": st.fixed_dictionaries({"key": _text, "value": _text}),
    "context/behavior.md.j2": st.fixed_dictionaries({"label": _text, "text": _text}),
    "context/preference.md.j2": st.fixed_dictionaries({"category": _text, "text": _text}),
    "context/context.md.j2": st.fixed_dictionaries({"line": _text}),
    "context/session.md.j2": st.fixed_dictionaries(
        {"label": _text, "timestamp": _text, "text": _text}
    ),
    "context/learning.md.j2": st.fixed_dictionaries({"text": _text}),
    "context/due.md.j2": st.fixed_dictionaries(
        {"kind": st.sampled_from(["reminder", "task"]), "text": _text, "why": _text}
    ),
    "context/project.md.j2": st.one_of(
        st.fixed_dictionaries(
            {
                "kind": st.sampled_from(
                    ["goal", "blocker", "in_progress", "next_step", "stack", "architecture", "fact"]
                ),
                "text": _text,
            }
        ),
        st.fixed_dictionaries(
            {"kind": st.just("decision"), "what": _text, "why": _maybe, "when": _maybe}
        ),
        st.fixed_dictionaries(
            {
                "kind": st.just("known_issue"),
                "severity": _text,
                "issue": _text,
                "workaround": _maybe,
            }
        ),
        st.fixed_dictionaries({"kind": st.just("environment"), "key": _text, "value": _text}),
        st.fixed_dictionaries(
            {"kind": st.just("key_file"), "path": _text, "role": _maybe, "missing": st.booleans()}
        ),
    ),
}


def test_every_context_template_has_a_python_rendering() -> None:
    shipped = {f"context/{p.name}" for p in (builtin_template_dir() / "context").glob("*.j2")}
    assert (
        shipped
        == set(_CONTEXT_VALUES)
        == {n for n in PYTHON_RENDERINGS if n.startswith("context/")}
    )


@given(
    st.sampled_from(sorted(_CONTEXT_VALUES)).flatmap(
        lambda n: st.tuples(st.just(n), _CONTEXT_VALUES[n])
    )
)
def test_context_renderings_equal_jinja(case: tuple[str, dict[str, object]]) -> None:
    name, values = case
    templates = Templates()
    assert templates.render(name, **values) == templates.render_with_jinja(name, **values)


# A cloned repository's .voyager/templates/ is a stranger's file: Jinja must render it in
# its sandbox, where no template reaches Python's internals (and so os.system).
HOSTILE_TEMPLATES = {
    "globals": "{{ self.__init__.__globals__.__builtins__.__import__('os')"
    ".system('touch PWNED') }}",
    "cycler": "{{ cycler.__init__.__globals__.os.system('touch PWNED') }}",
    "mro": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "format": "{{ '{0.__class__.__init__.__globals__}'.format(self) }}",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_TEMPLATES))
def test_a_cloned_repos_template_cannot_run_code(repo: Path, name: str) -> None:
    templates = repo / ".voyager" / "templates" / "brain"
    templates.mkdir(parents=True)
    (templates / "section.md.j2").write_text(
        HOSTILE_TEMPLATES[name] + "## {{ label }} — {{ timestamp }}\n{{ body }}\n"
    )
    done = run_cli("add", "observation", "hello", cwd=repo)
    assert not (repo / "PWNED").exists()
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "section.md.j2" in done.stderr and "unsafe" in done.stderr, done.stderr
    assert not (repo / ".voyager" / "brain.md").exists()


def test_a_sandboxed_override_still_renders_filters_and_loops(tmp_path: Path) -> None:
    (tmp_path / "brain").mkdir()
    (tmp_path / "brain" / "title.md.j2").write_text(
        "# {% for w in project.split('-') %}{{ w | capitalize }}{% endfor %}"
        " Brain — Session Context\n"
    )
    assert Templates(tmp_path).render("brain/title.md.j2", project="shop-api") == (
        "# ShopApi Brain — Session Context\n"
    )
