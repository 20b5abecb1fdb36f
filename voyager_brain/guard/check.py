"""The check before a tool call: which rules match, what is decided, what is recorded.

- A rule applies when it is active, belongs to the project's rule set or to none
  (global), and names this tool or none. A regex rule matches when its pattern is found
  in any of the values `fields.rule_fields` gives for the tool; a semantic rule when the
  call's values are similar enough to its description (`semantic_threshold`).
- The strongest action among the matches wins: block > warn > log > allow. A ``log``
  match allows the call; it is only recorded. ``priority`` orders the rules in the text.
- Every checked call is one ``tool_calls`` row, and every match one ``rule_triggers`` row
  with its action, written in one transaction (no row half-written) after the decision is
  made; when history.db is busy they are queued (`spool`), and the decision stands.

Standard library only, but RE2 (and the `regex` package for a pattern only Python's
engine can run) when a regex rule applies: this runs before every tool call.
"""

from __future__ import annotations

from ..value import Record
from .fields import rule_fields
from .patterns import Compiler
from .rules import Rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The actions by strength; the decision is the strongest matching one.
STRENGTH = {"allow": 0, "log": 1, "warn": 2, "block": 3}


class Match(Record):
    """A rule that matched, and why (for semantic rules: the score and shared terms)."""

    rule: Rule
    reasoning: str | None = None


class Decision(Record):
    """What the check decided for one tool call."""

    action: str  # block, warn, log or allow
    matches: tuple[Match, ...] = ()
    #: Rules that could not be checked (a pattern this engine cannot run), as one line each.
    problems: tuple[str, ...] = ()
    tool_call_id: int | None = None

    def of(self, action: str) -> tuple[Match, ...]:
        return tuple(m for m in self.matches if m.rule.action == action)


def applicable(rules: list[Rule], tool: str) -> list[Rule]:
    return [r for r in rules if r.active and (not r.tool or names_tool(r.tool, tool))]


def names_tool(rule_tool: str, tool: str) -> bool:
    """Whether a rule written for `rule_tool` applies to a call of `tool`: the same name,
    or, for an MCP tool written ``mcp__SERVER__TOOL``, the spelling an agent gives it:
    Claude Code's plugins ``mcp__plugin_PLUGIN_SERVER__TOOL``, Codex's with the server's
    ``-`` as ``_`` (``mcp__voyager_brain__save``), Gemini CLI's ``mcp_SERVER_TOOL``; case
    and ``-``/``_`` aside."""
    if rule_tool == tool:
        return True
    written, called = _same(rule_tool), _same(tool)
    if not (written.startswith("mcp_") and called.startswith("mcp_")):
        return False
    parts = written.split("__")
    if len(parts) != 3 or parts[0] != "mcp" or not parts[1] or not parts[2]:
        return written == called
    server, name = parts[1], parts[2]
    return called in (f"mcp__{server}__{name}", f"mcp_{server}_{name}") or (
        called.startswith("mcp__plugin_") and called.endswith(f"_{server}__{name}")
    )


def _same(name: str) -> str:
    return name.lower().replace("-", "_")


def evaluate(
    rules: list[Rule],
    tool: str,
    tool_input: Any,
    *,
    threshold: float = 0.45,
    embedder: Any = None,
    reviewer: Any = None,
) -> Decision:
    """Match `rules` against one call; nothing is recorded. Semantic rules are matched
    lexically unless `embedder` (a `semantic.Embedder`, e.g. the optional model) is
    given; with `reviewer` (a model provider, `semantic_review = true`) each semantic
    match is put to the model, which keeps or dismisses it (`review`)."""
    texts = rule_fields(tool, tool_input)
    found: list[Match] = []
    problems: list[str] = []
    semantic: list[Rule] = []
    compiler: Compiler | None = None
    for rule in applicable(rules, tool):
        if rule.type == "semantic":
            semantic.append(rule)
            continue
        if not rule.pattern:
            continue
        if compiler is None:
            compiler = Compiler()
        matcher = compiler.compile(rule.pattern)
        if matcher is None:
            problems.append(f"rule {rule.id} skipped: {compiler.errors[rule.pattern]}")
            continue
        hit = compiler.search(matcher, texts)
        if isinstance(hit, str):  # over its time limit: counted as matched, and said
            problems.append(f"rule {rule.id} {hit}")
            found.append(Match(rule, hit))
        elif hit:
            found.append(Match(rule))
    if compiler is not None:
        compiler.save()
    if semantic and texts:
        from .semantic import semantic_matches

        by_id = {r.id: r for r in semantic}
        for m in semantic_matches(semantic, texts, threshold, embedder=embedder):
            match: Match | None = Match(by_id[m.rule_id], m.reasoning)
            if reviewer is not None and match is not None:
                match = review(match, tool, texts, reviewer)
            if match is not None:
                found.append(match)
    found.sort(key=lambda m: (-STRENGTH[m.rule.action], -m.rule.priority, m.rule.id))
    action = found[0].rule.action if found else "allow"
    return Decision(action, tuple(found), tuple(problems))


#: What the model is asked about a semantic match; the first word of its answer decides.
REVIEW_PROMPT = """\
A coding agent is about to make this tool call.
Tool: {tool}
{call}

A guard rule of the project says: {rule}{problem}
Does this call break the rule? Answer YES or NO as the first word, then say why in one
sentence.
"""


def review(match: Match, tool: str, texts: list[str], reviewer: Any) -> Match | None:
    """A semantic match put to the model: kept (with the model's answer in its
    reasoning) unless the answer starts with NO. A model that fails keeps the match, so
    a broken model never lets through what the rule would stop."""
    from ..providers import ProviderError

    rule = match.rule
    prompt = REVIEW_PROMPT.format(
        tool=tool,
        call="\n".join(texts)[:4000],
        rule=rule.description,
        problem=f"\nProblem it prevents: {rule.problem}" if rule.problem else "",
    )
    try:
        answer = " ".join(reviewer.complete(prompt).split())
    except ProviderError as exc:
        return match._replace(reasoning=f"{match.reasoning}; model review failed: {exc}")
    first = answer.split(" ", 1)[0].strip(".,:;!").upper()
    if first == "NO":
        return None
    shown = answer if len(answer) <= 300 else answer[:299] + "…"
    return match._replace(reasoning=f"{match.reasoning}; model: {shown}")


def record_check(
    decision: Decision,
    *,
    project: str,
    session: str,
    tool: str,
    tool_input: Any,
    tool_use_id: str | None,
    transcript_path: str | None = None,
    denial: str | None = None,
    limit: int | None = None,
) -> Decision:
    """Write the call and its triggers (one transaction), or queue them when history.db
    is busy (`spool.write`); the decision is returned as it was made, with its row id
    when written. `denial`: the role guard's reason, stored as the call's failed result.
    Nothing here can change the decision."""
    from . import spool
    from .record import OUTPUT_LIMIT

    # A rule read from rules.toml because history.db was busy has no row yet (a negative
    # id): its trigger names the rule by what makes it the same, found once it is synced.
    triggers = [
        {
            "rule": m.rule.id if m.rule.id > 0 else None,
            "key": None
            if m.rule.id > 0
            else [m.rule.type, m.rule.pattern, m.rule.description, m.rule.tool],
            "action": m.rule.action,
            "reasoning": m.reasoning,
        }
        for m in decision.matches
    ]
    op = spool.check_op(
        project=project,
        session=session,
        transcript=transcript_path,
        tool=tool,
        tool_input=tool_input,
        tool_use_id=tool_use_id,
        triggers=triggers,
        denial=denial,
        limit=OUTPUT_LIMIT if limit is None else limit,
    )
    return decision._replace(tool_call_id=spool.write(op))


def reason_text(decision: Decision, tool: str) -> str:
    """What the agent is told: every matching rule (blocking ones first), with its
    problem and solution, so that it can act on it."""
    if decision.action == "block":
        head = f"voyager-brain guard blocked this {tool} call."
    else:
        head = f"voyager-brain guard warns about this {tool} call."
    lines = [head]
    for m in decision.matches:
        if m.rule.action == "log":
            continue
        lines.append(f"- Rule {m.rule.id} ({m.rule.action}): {m.rule.description}")
        if m.rule.problem:
            lines.append(f"  Problem: {m.rule.problem}")
        if m.rule.solution:
            lines.append(f"  Solution: {m.rule.solution}")
        if m.reasoning:
            lines.append(f"  Why it matched: {m.reasoning}")
    if decision.action == "block":
        blocking = [m.rule for m in decision.matches if m.rule.action == "block"]
        if any(rule.solution for rule in blocking):
            lines.append("Do not retry the same call; follow the solution above or ask the user.")
        else:
            lines.append("Do not retry the same call; do it another way or ask the user.")
    return "\n".join(lines)
