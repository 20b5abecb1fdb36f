"""The reviewer's verdict: ReviewOutput checked exactly, the REVIEW.md fallback in its
spellings, stale files never trusted, structured output first, REVIEW.md written back."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain.errors import BrainError
from voyager_brain.pipeline.verdict import (
    REVIEW_JSON_SCHEMA,
    SEVERITIES,
    VERDICTS,
    Decision,
    Issue,
    Review,
    VerdictError,
    decide,
    fresh_review_text,
    fresh_review_verdict,
    parse_structured,
    render_review,
    schema_text,
    stage_clock_ms,
    verdict_from_review_md,
)


def valid_output(**changes: Any) -> dict[str, Any]:
    output: dict[str, Any] = {
        "verdict": "REVISE",
        "score": 6,
        "summary": "Works, but the parser swallows errors.",
        "issues": [
            {"severity": "major", "description": "bare except", "file": "src/parse.py"},
            {"severity": "nit", "description": "typo in a comment"},
        ],
        "patternsCompliance": True,
    }
    output.update(changes)
    return output


# -- the schema ---------------------------------------------------------------------------


def test_schema_is_review_output_exactly() -> None:
    assert REVIEW_JSON_SCHEMA["required"] == [
        "verdict",
        "score",
        "summary",
        "issues",
        "patternsCompliance",
    ]
    assert REVIEW_JSON_SCHEMA["additionalProperties"] is False
    props = REVIEW_JSON_SCHEMA["properties"]
    assert props["verdict"]["enum"] == ["APPROVE", "REVISE", "REDESIGN"]
    assert props["score"] == {"type": "integer", "minimum": 1, "maximum": 10}
    item = props["issues"]["items"]
    assert item["required"] == ["severity", "description"]
    assert item["additionalProperties"] is False
    assert item["properties"]["severity"]["enum"] == list(SEVERITIES)
    assert props["patternsCompliance"] == {"type": "boolean"}


def test_schema_text_is_stable_json_of_the_schema() -> None:
    assert json.loads(schema_text()) == REVIEW_JSON_SCHEMA
    assert schema_text() == schema_text()
    assert schema_text().endswith("}\n")


# -- structured output --------------------------------------------------------------------


def test_valid_output_parses_to_a_review() -> None:
    review = parse_structured(valid_output())
    assert review == Review(
        verdict="REVISE",
        score=6,
        summary="Works, but the parser swallows errors.",
        issues=(
            Issue("major", "bare except", "src/parse.py"),
            Issue("nit", "typo in a comment"),
        ),
        patterns_compliance=True,
    )


@pytest.mark.parametrize("score", [1, 10])
def test_score_bounds_are_inclusive(score: int) -> None:
    assert parse_structured(valid_output(score=score)).score == score


def test_no_issues_is_valid() -> None:
    assert parse_structured(valid_output(issues=[], verdict="APPROVE")).issues == ()


def without(key: str) -> dict[str, Any]:
    output = valid_output()
    del output[key]
    return output


def issue_without(key: str) -> dict[str, Any]:
    output = valid_output()
    del output["issues"][0][key]
    return output


def issue_with(**changes: Any) -> dict[str, Any]:
    output = valid_output()
    output["issues"][0].update(changes)
    return output


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (valid_output(verdict="MAYBE"), "structured output.verdict: expected one of APPROVE"),
        (
            valid_output(verdict="approve"),
            'structured output.verdict: expected one of APPROVE, REVISE, REDESIGN (got "approve")',
        ),
        (valid_output(verdict=1), "structured output.verdict: expected a string (got 1)"),
        (
            valid_output(score=0),
            "structured output.score: expected an integer from 1 to 10 (got 0)",
        ),
        (
            valid_output(score=11),
            "structured output.score: expected an integer from 1 to 10 (got 11)",
        ),
        (valid_output(score=True), "structured output.score: expected an integer (got true)"),
        (valid_output(score=7.0), "structured output.score: expected an integer (got 7.0)"),
        (valid_output(score="7"), 'structured output.score: expected an integer (got "7")'),
        (valid_output(summary=None), "structured output.summary: expected a string (got null)"),
        (without("issues"), "structured output: missing 'issues' (an array)"),
        (without("verdict"), "structured output: missing 'verdict' (a string)"),
        (without("patternsCompliance"), "structured output: missing 'patternsCompliance'"),
        (valid_output(issues={}), "structured output.issues: expected an array (got dict)"),
        (
            valid_output(patternsCompliance="yes"),
            "structured output.patternsCompliance: expected a boolean",
        ),
        (
            valid_output(extra=1),
            "structured output: unknown key 'extra' (expected only verdict, score",
        ),
        (issue_without("severity"), "structured output.issues[0]: missing 'severity' (a string)"),
        (issue_without("description"), "structured output.issues[0]: missing 'description'"),
        (
            issue_with(severity="blocker"),
            "structured output.issues[0].severity: expected one of critical, major, minor, nit",
        ),
        (issue_with(severity="MAJOR"), "structured output.issues[0].severity: expected one of"),
        (issue_with(file=None), "structured output.issues[0].file: expected a string (got null)"),
        (issue_with(line=3), "structured output.issues[0]: unknown key 'line'"),
        (valid_output(issues=["bare except"]), "structured output.issues[0]: expected an object"),
        ([], "structured output: expected an object (got list)"),
        ("APPROVE", 'structured output: expected an object (got "APPROVE")'),
    ],
)
def test_invalid_output_names_the_field_and_what_was_expected(output: object, message: str) -> None:
    with pytest.raises(VerdictError) as caught:
        parse_structured(output)
    text = str(caught.value)
    assert text.startswith(message)
    assert "\n" not in text
    assert isinstance(caught.value, BrainError)


def test_a_long_bad_value_is_shortened_in_the_message() -> None:
    with pytest.raises(VerdictError, match=r"\.\.\.\)$"):
        parse_structured(valid_output(verdict="x" * 500))


def test_parsing_does_not_change_the_schema() -> None:
    before = copy.deepcopy(REVIEW_JSON_SCHEMA)
    parse_structured(valid_output())
    with pytest.raises(VerdictError):
        parse_structured(valid_output(score=0))
    assert before == REVIEW_JSON_SCHEMA


# -- the REVIEW.md fallback ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "verdict"),
    [
        ("Verdict: APPROVE", "APPROVE"),
        ("**Verdict:** revise", "REVISE"),
        ("**Verdict**: Redesign", "REDESIGN"),
        ("verdict REVISE", "REVISE"),
        ("## Verdict: APPROVE", "APPROVE"),
        ("- **Verdict**: APPROVE", "APPROVE"),
        ("* **Verdict:** REDESIGN", "REDESIGN"),
        ("1. Verdict: revise", "REVISE"),
        ("> **Verdict:** APPROVE", "APPROVE"),
        ("**Verdict: APPROVE**", "APPROVE"),
        ("Verdict: **REVISE**", "REVISE"),
        ("__Verdict__: __approve__", "APPROVE"),
        ("*Verdict*: REVISE", "REVISE"),
        ("VERDICT:APPROVE", "APPROVE"),
        ("   Verdict:   REVISE   ", "REVISE"),
        ("## Final Verdict: REDESIGN", "REDESIGN"),
        ("Verdict: REVISE — two blocking issues", "REVISE"),
        ("Verdict: APPROVE (with nits)", "APPROVE"),
        ("Verdict: APPROVE.", "APPROVE"),
    ],
)
def test_verdict_line_spellings(line: str, verdict: str) -> None:
    assert verdict_from_review_md(f"# Review\n\n{line}\n\nDetails.\n") == verdict


@pytest.mark.parametrize(
    "line",
    [
        "Verdict: APPROVED",
        "Verdict: APPROVE_WITH_NITS",
        "Verdict: APPROVE|REVISE|REDESIGN",
        "Verdict: APPROVE / REVISE",
        "the verdict was approve",
        "My verdict: APPROVE",
        "Verdicts: APPROVE",
        "VerdictAPPROVE",
        "Verdict - APPROVE",
        "Verdict: pending",
        "| Verdict | APPROVE |",
        "Approve",
        "",
    ],
)
def test_not_a_verdict_line(line: str) -> None:
    assert verdict_from_review_md(f"# Review\n\n{line}\n") is None


def test_the_first_verdict_line_counts() -> None:
    text = "Verdict: REVISE\n\nEarlier draft said:\nVerdict: APPROVE\n"
    assert verdict_from_review_md(text) == "REVISE"


def test_prose_before_the_verdict_line_is_skipped() -> None:
    text = "The verdict was approve at first.\nVerdict: APPROVED is not a word we use.\n"
    assert verdict_from_review_md(text + "**Verdict:** REDESIGN\n") == "REDESIGN"


@given(st.text())
def test_verdict_from_review_md_never_raises(text: str) -> None:
    assert verdict_from_review_md(text) in (None, *VERDICTS)


@given(st.text(), st.sampled_from(VERDICTS), st.text())
def test_a_verdict_line_anywhere_is_found_after_any_text(
    before: str, verdict: str, after: str
) -> None:
    lines = before.splitlines()
    text = "\n".join([*lines, f"**Verdict:** {verdict.lower()}", *after.splitlines()])
    found = verdict_from_review_md(text)
    if verdict_from_review_md(before) is None:
        assert found == verdict


# -- fresh or stale -----------------------------------------------------------------------


def write_review(path: Path, text: str, mtime_ns: int | None = None) -> Path:
    path.write_text(text, encoding="utf-8")
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


def test_review_written_during_the_stage_is_trusted(tmp_path: Path) -> None:
    started = stage_clock_ms()
    path = write_review(tmp_path / "REVIEW.md", "**Verdict:** REVISE\n")
    assert fresh_review_verdict(path, started) == "REVISE"


def test_stale_review_from_an_earlier_round_is_not_trusted(tmp_path: Path) -> None:
    started = stage_clock_ms()
    path = write_review(
        tmp_path / "REVIEW.md", "Verdict: APPROVE\n", mtime_ns=(started - 60_000) * 1_000_000
    )
    assert fresh_review_text(path, started) is None
    assert fresh_review_verdict(path, started) is None


def test_freshness_boundary_is_the_stage_start_millisecond(tmp_path: Path) -> None:
    started = 1_700_000_000_000
    path = write_review(tmp_path / "REVIEW.md", "Verdict: APPROVE\n", started * 1_000_000)
    assert fresh_review_verdict(path, started) == "APPROVE"
    os.utime(path, ns=(started * 1_000_000 - 1, started * 1_000_000 - 1))
    assert fresh_review_verdict(path, started) is None


def test_missing_review_is_none(tmp_path: Path) -> None:
    assert fresh_review_verdict(tmp_path / "REVIEW.md", stage_clock_ms()) is None


def test_fresh_review_without_a_verdict_line_is_none(tmp_path: Path) -> None:
    started = stage_clock_ms()
    path = write_review(tmp_path / "REVIEW.md", "# Review\n\nLooks fine.\n")
    assert fresh_review_text(path, started) == "# Review\n\nLooks fine.\n"
    assert fresh_review_verdict(path, started) is None


def test_stage_clock_is_not_ahead_of_file_times(tmp_path: Path) -> None:
    # A file written right after the stage starts must never look older than the stage.
    for attempt in range(200):
        started = stage_clock_ms()
        path = write_review(tmp_path / f"R{attempt}.md", "Verdict: APPROVE\n")
        assert os.stat(path).st_mtime_ns >= started * 1_000_000


# -- which path decides -------------------------------------------------------------------


def test_structured_output_wins_over_review_md() -> None:
    decision = decide(valid_output(verdict="APPROVE"), "Verdict: REDESIGN\n")
    assert decision.verdict == "APPROVE"
    assert decision.source == "structured"
    assert decision.review is not None
    assert decision.review.score == 6


def test_invalid_structured_output_fails_even_with_a_review_md_verdict() -> None:
    with pytest.raises(VerdictError, match=r"structured output\.verdict"):
        decide(valid_output(verdict="MAYBE"), "Verdict: APPROVE\n")


def test_empty_structured_output_is_invalid_not_missing() -> None:
    with pytest.raises(VerdictError, match="missing 'verdict'"):
        decide({}, "Verdict: APPROVE\n")


def test_fresh_review_md_decides_without_structured_output() -> None:
    assert decide(None, "## Verdict: redesign\n") == Decision("REDESIGN", "review_md")


def test_no_structured_output_and_no_fresh_review_md_says_so() -> None:
    with pytest.raises(VerdictError, match=r"wrote no REVIEW\.md during this stage"):
        decide(None, None)


def test_no_structured_output_and_no_verdict_line_says_so() -> None:
    with pytest.raises(VerdictError, match=r"REVIEW\.md has no `Verdict: APPROVE"):
        decide(None, "# Review\n\nVerdict: APPROVED\n")


def test_stale_review_md_through_decide_fails(tmp_path: Path) -> None:
    started = stage_clock_ms()
    path = write_review(
        tmp_path / "REVIEW.md", "Verdict: APPROVE\n", mtime_ns=(started - 1) * 1_000_000
    )
    with pytest.raises(VerdictError, match="never trusted"):
        decide(None, fresh_review_text(path, started))


# -- REVIEW.md written back ---------------------------------------------------------------


def test_render_review_shows_everything() -> None:
    text = render_review(parse_structured(valid_output()))
    assert text == (
        "# Review\n"
        "\n"
        "**Verdict:** REVISE\n"
        "**Score:** 6/10\n"
        "**Patterns compliance:** yes\n"
        "\n"
        "## Summary\n"
        "\n"
        "Works, but the parser swallows errors.\n"
        "\n"
        "## Issues\n"
        "\n"
        "- **major** `src/parse.py`: bare except\n"
        "- **nit**: typo in a comment\n"
    )


def test_render_review_without_issues() -> None:
    review = Review("APPROVE", 9, "", (), patterns_compliance=False)
    text = render_review(review)
    assert "**Patterns compliance:** no\n" in text
    assert text.endswith("## Issues\n\nNone.\n")
    assert "(none)" in text


def test_render_review_indents_multiline_descriptions() -> None:
    review = Review("REVISE", 4, "s", (Issue("minor", "first\nsecond\n\nthird"),), True)
    assert "- **minor**: first\n  second\n\n  third\n" in render_review(review)


reviews = st.builds(
    Review,
    verdict=st.sampled_from(VERDICTS),
    score=st.integers(1, 10),
    summary=st.text(),
    issues=st.lists(
        st.builds(
            Issue,
            severity=st.sampled_from(SEVERITIES),
            description=st.text(),
            file=st.none() | st.text(min_size=1),
        ),
        max_size=4,
    ).map(tuple),
    patterns_compliance=st.booleans(),
)


@given(reviews)
def test_rendered_review_reads_back_to_its_verdict(review: Review) -> None:
    assert verdict_from_review_md(render_review(review)) == review.verdict
    assert render_review(review) == render_review(review)
