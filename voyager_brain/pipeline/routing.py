"""Where the pipeline goes after a stage: the next stage, done, back to a builder or the
architect, or failed. Pure: the engine applies the `Route` to pipeline-state.json.

Seed 004's rules, with its silent fall-backs made errors: APPROVE goes on (after the last
stage the pipeline is completed with finalVerdict APPROVE). REVISE or REDESIGN, once
`retries` has reached `max_retries`, fails the pipeline with finalVerdict = that verdict;
before that, `retries` goes up by one (one counter for both verdicts) and REVISE restarts
at the nearest builder before the reviewer, REDESIGN at the nearest architect before it.
A REDESIGN with no architect there, or a REVISE with no builder, fails the pipeline (the
original tool silently turned such a REDESIGN into a REVISE).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from voyager_brain.errors import BrainError
from voyager_brain.pipeline.verdict import VERDICTS

ROLES = ("scout", "architect", "builder", "reviewer")

#: Where each verdict sends the pipeline back to (APPROVE goes on).
RESTART_ROLE = {"REVISE": "builder", "REDESIGN": "architect"}


class StagesError(BrainError, ValueError):
    """A pipeline's stage list is empty or names a role that does not exist."""


@dataclasses.dataclass(frozen=True, slots=True)
class Route:
    """What to do after a stage.

    - ``next``: run stage `stage` (the one after).
    - ``completed``: the last stage approved; `final_verdict` is APPROVE.
    - ``restart``: run stage `stage` again with `retries` (one more); the engine resets
      that stage and every later one to ``pending``.
    - ``failed``: the pipeline ends; `final_verdict` is the review's verdict and `error`
      says why.

    `stage` is None when the pipeline ends; `retries` is the counter to store.
    """

    action: Literal["next", "completed", "restart", "failed"]
    stage: int | None
    retries: int
    final_verdict: str | None = None
    error: str | None = None


def validate_roles(roles: Sequence[str]) -> tuple[str, ...]:
    """`roles` as a tuple, when it is a usable stage list: not empty (a list of blank
    names, as ``--stages ''`` gives, counts as empty), and every name one of `ROLES`
    exactly (lowercase, no spaces). A role may appear more than once.

    Raises StagesError naming the first bad role and its position.
    """
    if not roles or all(not role.strip() for role in roles):
        raise StagesError(f"no stages given (expected some of {', '.join(ROLES)})")
    for position, role in enumerate(roles, start=1):
        if role not in ROLES:
            raise StagesError(
                f"stage {position}: unknown role {role!r} (expected one of {', '.join(ROLES)})"
            )
    return tuple(roles)


def route(roles: Sequence[str], index: int, verdict: str, retries: int, max_retries: int) -> Route:
    """Where the pipeline `roles` goes after stage `index` ended with `verdict`.

    A stage other than a reviewer passes APPROVE when its output passed validation.
    `retries` is the counter so far (0 <= retries <= max_retries). Raises ValueError for
    arguments no engine should pass (an index out of range, an unknown verdict, a REVISE
    or REDESIGN from a stage that is not a reviewer, a bad counter).
    """
    if not 0 <= index < len(roles):
        raise ValueError(f"stage index {index} out of range for {len(roles)} stages")
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r} (expected one of {', '.join(VERDICTS)})")
    if not 0 <= retries <= max_retries:
        raise ValueError(f"retries {retries} outside 0..max_retries ({max_retries})")

    if verdict == "APPROVE":
        if index == len(roles) - 1:
            return Route("completed", None, retries, final_verdict="APPROVE")
        return Route("next", index + 1, retries)

    if roles[index] != "reviewer":
        raise ValueError(f"stage {index} ({roles[index]}) cannot give the verdict {verdict}")
    if retries >= max_retries:
        return Route(
            "failed",
            None,
            retries,
            final_verdict=verdict,
            error=f"review said {verdict} after {retries} retries (max_retries {max_retries})",
        )
    target = RESTART_ROLE[verdict]
    restart = next((i for i in range(index - 1, -1, -1) if roles[i] == target), None)
    if restart is None:
        return Route(
            "failed",
            None,
            retries,
            final_verdict=verdict,
            error=(
                f"review said {verdict} but no {target} runs before the reviewer "
                f"(stages: {','.join(roles)})"
            ),
        )
    return Route("restart", restart, retries + 1)
