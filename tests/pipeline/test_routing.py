"""Where the pipeline goes after a stage, pinned with a small simulation of the engine's
loop: every stage is one agent run, every reviewer gives the next scripted verdict."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from voyager_brain.errors import BrainError
from voyager_brain.pipeline.routing import ROLES, Route, StagesError, route, validate_roles
from voyager_brain.pipeline.verdict import VERDICTS


def simulate(
    roles: Sequence[str], verdicts: Iterable[str], max_retries: int
) -> tuple[list[str], Route]:
    """The agent runs (roles, in order) and the final route. Stages other than reviewers
    pass (APPROVE); reviewers give `verdicts` in turn."""
    scripted = iter(verdicts)
    runs: list[str] = []
    index, retries = 0, 0
    while True:
        runs.append(roles[index])
        verdict = next(scripted) if roles[index] == "reviewer" else "APPROVE"
        step = route(roles, index, verdict, retries, max_retries)
        if step.action in ("completed", "failed"):
            return runs, step
        assert step.stage is not None
        index, retries = step.stage, step.retries


FOREVER_REVISE = iter(lambda: "REVISE", None)


# -- the scenarios ----------------------------------------------------------------


def test_happy_path_with_four_stages() -> None:
    roles = ["scout", "architect", "builder", "reviewer"]
    runs, end = simulate(roles, ["APPROVE"], max_retries=2)
    assert runs == roles
    assert end == Route("completed", None, 0, final_verdict="APPROVE")


def test_every_review_revise_with_max_retries_2_makes_six_runs() -> None:
    runs, end = simulate(["builder", "reviewer"], FOREVER_REVISE, max_retries=2)
    assert len(runs) == 6
    assert runs == ["builder", "reviewer"] * 3
    assert end.action == "failed"
    assert end.retries == 2
    assert end.final_verdict == "REVISE"
    assert end.error == "review said REVISE after 2 retries (max_retries 2)"


def test_max_retries_0_fails_after_one_review() -> None:
    runs, end = simulate(["builder", "reviewer"], FOREVER_REVISE, max_retries=0)
    assert runs == ["builder", "reviewer"]
    assert (end.action, end.retries, end.final_verdict) == ("failed", 0, "REVISE")


def test_one_revise_then_approve() -> None:
    roles = ["architect", "builder", "reviewer"]
    runs, end = simulate(roles, ["REVISE", "APPROVE"], max_retries=2)
    assert runs == ["architect", "builder", "reviewer", "builder", "reviewer"]
    assert end == Route("completed", None, 1, final_verdict="APPROVE")


def test_one_redesign_then_approve() -> None:
    roles = ["architect", "builder", "reviewer"]
    runs, end = simulate(roles, ["REDESIGN", "APPROVE"], max_retries=2)
    assert runs == roles * 2
    assert end == Route("completed", None, 1, final_verdict="APPROVE")


def test_revise_and_redesign_share_one_counter() -> None:
    roles = ["scout", "architect", "builder", "reviewer"]
    runs, end = simulate(roles, ["REVISE", "REDESIGN", "REVISE"], max_retries=2)
    assert runs == [
        *roles,
        "builder",
        "reviewer",  # REVISE: retry 1
        "architect",
        "builder",
        "reviewer",  # REDESIGN: retry 2 (the scout does not run again)
    ]
    assert (end.action, end.retries, end.final_verdict) == ("failed", 2, "REVISE")


def test_redesign_as_the_last_straw_is_the_final_verdict() -> None:
    roles = ["architect", "builder", "reviewer"]
    _, end = simulate(roles, ["REVISE", "REDESIGN"], max_retries=1)
    assert (end.action, end.retries, end.final_verdict) == ("failed", 1, "REDESIGN")


# -- single steps -------------------------------------------------------------------------


def test_approve_goes_to_the_next_stage() -> None:
    assert route(["builder", "reviewer"], 0, "APPROVE", 1, 2) == Route("next", 1, 1)


def test_revise_restarts_at_the_nearest_builder_before_the_reviewer() -> None:
    roles = ["builder", "reviewer", "builder", "reviewer"]
    assert route(roles, 3, "REVISE", 0, 2) == Route("restart", 2, 1)
    assert route(roles, 1, "REVISE", 0, 2) == Route("restart", 0, 1)


def test_redesign_restarts_at_the_architect() -> None:
    roles = ["scout", "architect", "builder", "reviewer"]
    assert route(roles, 3, "REDESIGN", 1, 2) == Route("restart", 1, 2)


def test_redesign_without_an_architect_fails_clearly() -> None:
    end = route(["scout", "builder", "reviewer"], 2, "REDESIGN", 0, 2)
    assert end.action == "failed"
    assert end.final_verdict == "REDESIGN"
    assert end.retries == 0
    assert end.error == (
        "review said REDESIGN but no architect runs before the reviewer "
        "(stages: scout,builder,reviewer)"
    )


def test_redesign_with_the_architect_only_after_the_reviewer_fails() -> None:
    end = route(["builder", "reviewer", "architect"], 1, "REDESIGN", 0, 2)
    assert end.action == "failed"
    assert end.error is not None
    assert "no architect runs before the reviewer" in end.error


def test_revise_without_a_builder_before_the_reviewer_fails_clearly() -> None:
    end = route(["architect", "reviewer", "builder"], 1, "REVISE", 0, 2)
    assert (end.action, end.final_verdict) == ("failed", "REVISE")
    assert end.error is not None
    assert "no builder runs before the reviewer" in end.error


def test_a_lone_reviewer_that_approves_completes() -> None:
    assert route(["reviewer"], 0, "APPROVE", 0, 0).action == "completed"


@pytest.mark.parametrize(
    ("roles", "index", "verdict", "retries", "max_retries", "message"),
    [
        (["builder", "reviewer"], 2, "APPROVE", 0, 2, "out of range"),
        (["builder", "reviewer"], -1, "APPROVE", 0, 2, "out of range"),
        (["builder", "reviewer"], 1, "approve", 0, 2, "unknown verdict"),
        (["builder", "reviewer"], 1, "REVISE", 3, 2, "retries 3 outside"),
        (["builder", "reviewer"], 1, "REVISE", -1, 2, "retries -1 outside"),
        (["builder", "reviewer"], 0, "REVISE", 0, 2, "cannot give the verdict"),
    ],
)
def test_arguments_no_engine_should_pass_are_refused(
    roles: list[str], index: int, verdict: str, retries: int, max_retries: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        route(roles, index, verdict, retries, max_retries)


# -- the stage list -----------------------------------------------------------------------


def test_validate_roles_accepts_known_roles_in_any_order_and_repeats() -> None:
    assert validate_roles(["builder", "reviewer", "builder", "reviewer"]) == (
        "builder",
        "reviewer",
        "builder",
        "reviewer",
    )
    assert validate_roles(ROLES) == ROLES


@pytest.mark.parametrize("roles", [[], [""], ["", " "]])
def test_an_empty_stage_list_is_refused(roles: list[str]) -> None:
    with pytest.raises(StagesError, match="no stages given"):
        validate_roles(roles)


@pytest.mark.parametrize(
    ("roles", "message"),
    [
        (["architect", "coder"], "stage 2: unknown role 'coder' (expected one of scout, "),
        (["Builder"], "stage 1: unknown role 'Builder'"),
        (["builder", " reviewer"], "stage 2: unknown role ' reviewer'"),
        (["builder", "", "reviewer"], "stage 2: unknown role ''"),
    ],
)
def test_an_unknown_role_is_named(roles: list[str], message: str) -> None:
    with pytest.raises(StagesError) as caught:
        validate_roles(roles)
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, BrainError)


# -- properties ---------------------------------------------------------------------------

pipelines = st.lists(st.sampled_from(ROLES), min_size=1, max_size=7)


@given(
    pipelines,
    st.data(),
    st.sampled_from(VERDICTS),
    st.integers(0, 5),
)
def test_route_properties(
    roles: list[str], data: st.DataObject, verdict: str, max_retries: int
) -> None:
    reviewers = [i for i, role in enumerate(roles) if role == "reviewer"]
    assume(reviewers)
    index = data.draw(st.sampled_from(reviewers))
    retries = data.draw(st.integers(0, max_retries))
    step = route(roles, index, verdict, retries, max_retries)

    assert step.retries <= max_retries
    assert step.retries in (retries, retries + 1)
    if step.action == "completed":
        assert verdict == "APPROVE" and index == len(roles) - 1
        assert step.final_verdict == "APPROVE"
    if step.action == "next":
        assert verdict == "APPROVE" and step.stage == index + 1
    if step.action == "restart":
        assert step.stage is not None and step.stage < index
        assert roles[step.stage] == {"REVISE": "builder", "REDESIGN": "architect"}[verdict]
        assert step.retries == retries + 1
    if step.action == "failed":
        assert step.final_verdict == verdict != "APPROVE"
        assert step.error
        assert step.stage is None
    if verdict == "APPROVE":
        assert step.action in ("next", "completed")


@given(pipelines, st.lists(st.sampled_from(VERDICTS), min_size=40, max_size=40))
def test_a_simulated_pipeline_always_ends_within_its_retries(
    roles: list[str], verdicts: list[str]
) -> None:
    max_retries = 2
    runs, end = simulate(roles, verdicts, max_retries)
    assert end.action in ("completed", "failed")
    assert end.retries <= max_retries
    # Each round runs at most every stage once.
    assert len(runs) <= len(roles) * (max_retries + 1)
