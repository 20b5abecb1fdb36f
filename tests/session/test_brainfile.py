"""brain.md's format: the seed's shape, escaping, fences, front matter, hand edits, and the
property tests that hold parse/render to a round trip and the fast scan to markdown-it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from voyager_brain import CorruptFileError, TemplateError
from voyager_brain.errors import InvalidEntryError
from voyager_brain.render import Templates
from voyager_brain.session.brainfile import (
    BrainDocument,
    SectionMemo,
    heading_lines,
    parse,
    reference_heading_lines,
    render,
    sections,
)
from voyager_brain.session.escaping import FENCE_MARKER
from voyager_brain.session.model import ENTRY_TYPES, BrainEntry

T0 = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)
T1 = datetime(2026, 3, 21, 14, 35, tzinfo=UTC)
PATH = Path(".voyager/brain.md")
MARKER_1 = FENCE_MARKER.format(n=1, s="")
MARKER_3 = FENCE_MARKER.format(n=3, s="s")

SEED_EXAMPLE = """\
# Nity Brain — Session Context
## Observation — 2026-03-21T14:30:00Z
Task: Implement auth flow
Decision: Chose JWT over sessions for stateless API
Outcome: Tests passing, 3 iterations
## Loop Status — 2026-03-21T14:35:00Z
Iteration: 4/10
Circuit breaker: CLOSED
Progress: Steady — 2 files modified
"""


def roundtrip(doc: BrainDocument) -> BrainDocument:
    return parse(render(doc, Templates()).encode(), PATH)


def test_seed_example_loads_as_two_entries() -> None:
    doc = parse(SEED_EXAMPLE.encode(), PATH)
    assert doc.project == "Nity"
    assert [(e.type, e.timestamp) for e in doc.entries] == [
        ("observation", T0),
        ("loop_status", T1),
    ]
    assert doc.entries[0].content == (
        "Task: Implement auth flow\nDecision: Chose JWT over sessions for stateless API\n"
        "Outcome: Tests passing, 3 iterations"
    )
    assert doc.entries[1].content.endswith("Progress: Steady — 2 files modified")


def test_render_has_the_seed_shape() -> None:
    doc = BrainDocument(
        project="Nity",
        entries=(
            BrainEntry("observation", "Task: Implement auth flow", T0),
            BrainEntry("loop_status", "Iteration: 4/10", T1),
        ),
    )
    assert render(doc, Templates()) == (
        "# Nity Brain — Session Context\n"
        "\n"
        "## Observation — 2026-03-21T14:30:00Z\n"
        "Task: Implement auth flow\n"
        "\n"
        "## Loop Status — 2026-03-21T14:35:00Z\n"
        "Iteration: 4/10\n"
    )


def test_source_is_an_html_comment_below_the_heading() -> None:
    entry = BrainEntry("reflection", "Summary", T0, source="compact")
    text = render(BrainDocument("P", entries=(entry,)), Templates())
    assert "## Reflection — 2026-03-21T14:30:00Z\n<!-- source: compact -->\nSummary\n" in text
    assert roundtrip(BrainDocument("P", entries=(entry,))).entries == (entry,)


def test_heading_inside_a_fence_is_body_text() -> None:
    text = SEED_EXAMPLE.replace(
        "Outcome: Tests passing, 3 iterations",
        "```markdown\n## Decision — 2026-03-21T14:31:00Z\nnot a section\n```",
    )
    doc = parse(text.encode(), PATH)
    assert len(doc.entries) == 2
    assert "## Decision — 2026-03-21T14:31:00Z" in doc.entries[0].content


def test_heading_shaped_body_line_is_escaped_and_restored() -> None:
    body = "## Decision — 2026-03-21T14:31:00Z\n  ## Observation — x\n\\## Reflection — y"
    entry = BrainEntry("observation", body, T0)
    text = render(BrainDocument("P", entries=(entry,)), Templates())
    assert "\n\\## Decision — 2026-03-21T14:31:00Z\n" in text
    assert "\n\\\\## Reflection — y" in text
    assert roundtrip(BrainDocument("P", entries=(entry,))).entries == (entry,)


def test_unclosed_fence_is_closed_so_the_next_heading_survives() -> None:
    entries = (
        BrainEntry("observation", "```python\nprint('left open')", T0),
        BrainEntry("decision", "Next entry", T1),
    )
    text = render(BrainDocument("P", entries=entries), Templates())
    assert f"print('left open')\n```\n{MARKER_1}\n" in text
    assert roundtrip(BrainDocument("P", entries=entries)).entries == entries
    assert heading_lines(text) == reference_heading_lines(text)


def test_unclosed_html_comment_cannot_hide_later_sections() -> None:
    entries = (
        BrainEntry("observation", "<!-- a comment never closed", T0),
        BrainEntry("decision", "Next entry", T1),
    )
    text = render(BrainDocument("P", entries=entries), Templates())
    assert len(reference_heading_lines(text)) == 2
    assert roundtrip(BrainDocument("P", entries=entries)).entries == entries


def test_fence_inside_a_list_is_closed_for_both_readings() -> None:
    entries = (
        BrainEntry("observation", "- item\n  ```\n## Observation — 2026-03-21T14:30:00Z", T0),
        BrainEntry("observation", "- a\n  ```\n- b\n```", T0),
        BrainEntry("observation", "- item\n   ~~~\n```", T0),
        BrainEntry("decision", "Next entry", T1),
    )
    text = render(BrainDocument("P", entries=entries), Templates())
    assert heading_lines(text) == reference_heading_lines(text)
    assert len(heading_lines(text)) == 4
    assert roundtrip(BrainDocument("P", entries=entries)).entries == entries


def test_front_matter_holds_metadata() -> None:
    doc = BrainDocument("P", meta={"last_compaction": "2026-03-21T15:00:00Z", "owner": "it's"})
    text = render(doc, Templates())
    assert text.startswith("---\nlast_compaction: '2026-03-21T15:00:00Z'\nowner: 'it''s'\n---\n")
    assert roundtrip(doc).meta == doc.meta


def test_foreign_yaml_front_matter_is_read_with_yaml() -> None:
    text = "---\ntags: [a, b]\ncount: 3\n---\n# P Brain — Session Context\n"
    doc = parse(text.encode(), PATH)
    assert doc.meta == {"tags": ["a", "b"], "count": 3}
    assert roundtrip(doc).meta == doc.meta


def test_preamble_written_by_hand_is_kept() -> None:
    text = (
        "# P Brain — Session Context\n\nNotes for humans.\n\n"
        "## Decision — 2026-03-21T14:30:00Z\nX\n"
    )
    doc = parse(text.encode(), PATH)
    assert doc.preamble == "Notes for humans."
    assert render(doc, Templates()) == text


def test_hand_edited_file_loads_as_edited() -> None:
    edited = (
        SEED_EXAMPLE.replace("Task: Implement auth flow", "Task: Implement the auth flow")
        + "## Decision - 2026-03-21T15:00:00+01:00\nAdded by hand, no blank line, en dash\n"
    )
    doc = parse(edited.encode(), PATH)
    assert doc.entries[0].content.startswith("Task: Implement the auth flow")
    assert doc.entries[2] == BrainEntry(
        "decision",
        "Added by hand, no blank line, en dash",
        datetime(2026, 3, 21, 14, 0, tzinfo=UTC),
    )


def test_heading_with_a_bad_time_is_text_and_a_warning() -> None:
    text = SEED_EXAMPLE + "## Decision — yesterday\nsome text\n"
    doc = parse(text.encode(), PATH)
    assert len(doc.entries) == 2
    assert "## Decision — yesterday" in doc.entries[1].content
    assert doc.warnings and "line 10" in doc.warnings[0] and "'yesterday'" in doc.warnings[0]


def test_crlf_file_reads_like_lf() -> None:
    doc = parse(SEED_EXAMPLE.replace("\n", "\r\n").encode(), PATH)
    assert doc.entries == parse(SEED_EXAMPLE.encode(), PATH).entries


@pytest.mark.parametrize(
    ("data", "line", "expected"),
    [
        (b"# P Brain \xe2\x80\x94 Session Context\n\xff\xfe\n", 2, "not valid UTF-8"),
        (b"---\nproject: [unclosed\n---\n# P\n", 3, "front matter is not valid YAML"),
        (b"---\nproject: x\n# never closed\n", 1, "never closed"),
        (b"---\n- a\n- b\n---\n", 2, "expected key: value pairs"),
    ],
    ids=["not-utf8", "bad-yaml", "unclosed-front-matter", "front-matter-not-a-mapping"],
)
def test_unreadable_file_names_file_line_and_problem(data: bytes, line: int, expected: str) -> None:
    with pytest.raises(CorruptFileError) as info:
        parse(data, PATH)
    message = str(info.value)
    assert message.startswith(f"{PATH}:{line}: ")
    assert expected in message
    assert "\n" not in message


def test_template_override_that_breaks_the_heading_is_refused(tmp_path: Path) -> None:
    (tmp_path / "brain").mkdir()
    (tmp_path / "brain" / "section.md.j2").write_text(
        "### {{ label }} at {{ timestamp }}\n{{ body }}\n"
    )
    doc = BrainDocument("P", entries=(BrainEntry("observation", "x", T0),))
    with pytest.raises(TemplateError, match="does not read back"):
        render(doc, Templates(tmp_path))


def test_template_override_may_add_around_the_body(tmp_path: Path) -> None:
    (tmp_path / "brain").mkdir()
    (tmp_path / "brain" / "title.md.j2").write_text(
        "# {{ project }} Brain — Session Context\n\n> Managed by voyager-brain.\n"
    )
    doc = BrainDocument("P", entries=(BrainEntry("observation", "x", T0),))
    text = render(doc, Templates(tmp_path))
    assert "> Managed by voyager-brain." in text
    # The extra line is read back as preamble, which the override writes again.
    assert parse(text.encode(), PATH).entries == doc.entries


# -- property tests -----------------------------------------------------------------------

_SPECIAL_LINES = [
    "## Observation — 2026-03-21T14:30:00Z",
    "## Decision — 2026-03-21T14:30:00Z",
    "## Loop Status — 2027-01-01T00:00:00Z",
    "  ## Reflection — 2026-03-21T14:30:00Z",
    "## Decision — 2026-03-21T14:30:00Z ##",
    "\\## Observation — 2026-03-21T14:30:00Z",
    "\\\\## Observation — 2026-03-21T14:30:00Z",
    "## Decision - 2026-03-21T14:30:00+02:00",
    "### Observation — 2026-03-21T14:30:00Z",
    "## Observations of the week",
    "# Nity Brain — Session Context",
    "```",
    "```python",
    "````",
    "~~~",
    "~~~~ text",
    "  ```",
    "   ~~~",
    "    ```",
    "``` `x`",
    "<!-- source: compact -->",
    "<!-- source: -->",
    MARKER_1,
    "\\" + MARKER_1,
    MARKER_3,
    "<!--",
    "-->",
    "<pre>",
    "</pre>",
    "<div>",
    "<?php",
    "<![CDATA[",
    "---",
    "===",
    "- item",
    "1. item",
    "  - nested",
    "> quote",
    "> ```",
    "* * *",
    "",
    " ",
    "   ",
    "text with trailing spaces   ",
    "\t tab",
    "日本語 ✓ émoji 🧠",
]
# No NUL: an entry cannot hold one, as git would take the brain.md it is in for binary.
_text_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\0"),
    max_size=40,
)
_line = st.one_of(st.sampled_from(_SPECIAL_LINES), _text_line)
body_text = st.lists(_line, max_size=12).map("\n".join)
timestamps = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2099, 12, 31), timezones=st.just(UTC)
).map(lambda d: d.replace(microsecond=0))
sources = st.one_of(
    st.none(),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")),
        min_size=1,
        max_size=20,
    )
    .map(str.strip)
    .filter(lambda s: bool(s) and "-->" not in s),
)
entries = st.builds(
    BrainEntry,
    type=st.sampled_from(ENTRY_TYPES),
    content=body_text,
    timestamp=timestamps,
    source=sources,
)
documents = st.builds(
    BrainDocument,
    project=st.sampled_from(["Nity", "voyager-brain", "日本 project", "a — b"]),
    meta=st.sampled_from([{}, {"last_compaction": "2026-03-21T15:00:00Z"}]),
    entries=st.lists(entries, max_size=6).map(tuple),
    preamble=st.one_of(st.none(), body_text),
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_parse_of_render_gives_back_the_document(doc: BrainDocument) -> None:
    back = roundtrip(doc)
    assert back.entries == doc.entries
    assert [e.key for e in back.entries] == [e.key for e in doc.entries]
    assert (back.project, dict(back.meta)) == (doc.project, doc.meta)
    assert back.preamble == ((doc.preamble or "").strip("\n") or None)
    assert back.warnings == ()


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(documents, documents)
def test_a_shared_memo_reads_every_version_as_parse_alone(
    one: BrainDocument, two: BrainDocument
) -> None:
    memo: SectionMemo = {}
    both = one.replace(entries=one.entries + two.entries)
    for doc in (one, two, both, one):
        text = render(doc, Templates())
        assert parse(text, PATH, memo) == parse(text, PATH)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_render_is_deterministic_and_stable(doc: BrainDocument) -> None:
    text = render(doc, Templates())
    assert render(roundtrip(doc), Templates()) == text


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_fast_scan_finds_the_sections_markdown_it_finds(doc: BrainDocument) -> None:
    text = render(doc, Templates())
    assert heading_lines(text) == reference_heading_lines(text)
    assert len(heading_lines(text)) == len(doc.entries)


def test_is_heading_reads_one_line_as_the_parser_does() -> None:
    from voyager_brain.session.brainfile import is_heading

    assert is_heading("## Observation — 2026-03-21T14:30:00Z")
    assert is_heading("##  Loop Status - 2026-03-21T14:30:00+02:00")
    assert not is_heading("## Observation — yesterday")
    assert not is_heading("\\## Observation — 2026-03-21T14:30:00Z")
    assert not is_heading("### Observation — 2026-03-21T14:30:00Z")


_raw_line = st.one_of(
    st.sampled_from(
        [
            "## Observation — 2026-03-21T14:30:00Z",
            "## Decision - 2026-03-21T16:30:00+02:00",
            "<!-- source: agent -->",
            "<!-- source: a --> b -->",
            "<!-- source:  -->",
            "```",
            "text\r",
            "",
            FENCE_MARKER.format(n=1, s=""),
        ]
    ),
    _text_line,
)


@settings(max_examples=300)
@given(st.lists(_raw_line, max_size=14).map("\n".join))
@example(  # a source line that the closing-fence marker trims away with the fence
    "\n".join(["## Observation — 2026-03-21T14:30:00Z", "<!-- source: a -->", FENCE_MARKER])
    .replace("{n}", "1")
    .replace("{s}", "")
)
@example(  # a closing fence we added, after a blank line: the text ends in a newline
    "\n".join(["## Observation — 2026-03-21T14:30:00Z", "text", "", "```", FENCE_MARKER])
    .replace("{n}", "1")
    .replace("{s}", "")
)
def test_parsed_entries_are_the_entries_the_checks_make(text: str) -> None:
    """The parser builds entries without the constructor's checks where they cannot
    fail; the result (and the identity key) is what the checked constructor gives."""
    try:
        doc = parse("# P Brain — Session Context\n" + text, PATH)
    except InvalidEntryError:
        return  # the checks refused a section, as they did before
    for e in doc.entries:
        checked = BrainEntry(e.type, e.content, e.timestamp, e.source)
        assert (e, e.key) == (checked, checked.key)
    # The lazy sections read the same: the source without decoding where it can.
    title, found = sections("# P Brain — Session Context\n" + text, PATH)
    assert title == doc.project
    assert [(x.type, x.timestamp, x.source) for x in found] == [
        (e.type, e.timestamp, e.source) for e in doc.entries
    ]
    assert [x.entry for x in found] == list(doc.entries)


_heading_part = st.sampled_from(
    [
        *("#", "##", " ", "\t", "  ", "Decision", "Loop Status", "Reflection", "—", "–", "-"),
        *("2026-03-21T14:30:00Z", "Z", ":", "x", "\r", "é"),
    ]
)


@settings(max_examples=2000)
@given(st.lists(_heading_part, max_size=10))
def test_the_scan_reads_a_heading_line_as_the_heading_pattern_does(parts: list[str]) -> None:
    """The scan's search pattern (spelled for speed) takes the same lines, labels and
    times as the plain `## <Label> — <time>` pattern used everywhere else."""
    from voyager_brain.session.brainfile import _HEADINGS, _heading

    line = "".join(parts)
    plain = _heading().match(line)
    for found in (_HEADINGS[0].match(line), _HEADINGS[1].match("\n" + line)):
        if plain is None:
            assert found is None
        else:
            assert found is not None and (found[2], found[3]) == (plain[1], plain[2])
