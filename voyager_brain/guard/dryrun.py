"""A tool call put to a project's rules without recording anything: what `voyager-brain
rules test` and the MCP tool ``rules_test`` show. The project's .voyager/rules.toml is
synced first and its config.toml read, as a hook would (semantic rules are matched with
the embedder asked for, else the config's)."""

from __future__ import annotations

from ..value import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .check import Decision


class DryRun(Record):
    """The check of one call, nothing recorded."""

    decision: Decision
    #: What could not be read or checked (.voyager/rules.toml's problems, then the
    #: check's), one line each.
    problems: tuple[str, ...]
    #: The text the agent would be told, when the call is blocked or warned about.
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        """What `voyager-brain rules test --json` prints: the decision, every match."""
        return {
            "decision": self.decision.action,
            "matches": [
                {**m.rule.to_dict(), "reasoning": m.reasoning} for m in self.decision.matches
            ],
        }


def dry_run(project: str, tool: str, tool_input: Any, *, embedder: str | None = None) -> DryRun:
    """Check the call of `tool` with `tool_input` against the rules of `project` (a path
    as `rules.project_folder` gives it), on this thread's connection to history.db."""
    from pathlib import Path

    from ..config import load_config
    from ..providers import get_provider
    from .check import applicable, evaluate, reason_text
    from .db import connect
    from .patterns import timed_notes
    from .rules import list_rules
    from .semantic import embedder_named
    from .teamrules import sync_team_rules

    db = connect()
    problems = sync_team_rules(db, project)
    config = load_config(Path(project) / ".voyager")
    rules = list_rules(db, project=project)
    problems += timed_notes(applicable(rules, tool))
    decision = evaluate(
        rules,
        tool,
        tool_input,
        threshold=config.semantic_threshold,
        embedder=embedder_named(embedder or config.embedder),
        reviewer=get_provider(config) if config.semantic_review else None,
    )
    reason = reason_text(decision, tool) if decision.action in ("block", "warn") else None
    return DryRun(decision, (*problems, *decision.problems), reason)
