"""The guard and the session history behind every agent's tool-call hooks (seed 003).

An adapter reads its agent's payload into a `HookCall` (tool names in Claude Code's
terms) and renders the `Verdict` in its agent's format; everything between is here:

- `check`: the pipeline's role guard, then the guard rules; the call and every rule
  that fired are recorded. The verdict is ``block`` with the reason (each matching rule,
  its problem and its solution), ``warn`` with the same kind of text, or nothing.
- `record_result`: the tool's result on its row (output cut and redacted).
- `record_prompt`: the user's message.
- `close_session`: the session's end (a later call or prompt opens it again).

The decision is made from the rules before anything is written. Writing the history
comes after and never changes it: a history.db busy past `spool.WRITE_WAIT` (or failing)
gets the rows queued, written by the next writer. When the check itself fails (history.db
corrupt or newer than this code, a bug), the call is allowed with one line on stderr;
``guard_fail = "closed"`` in config.toml blocks it instead; a call the role guard has
already denied stays denied.

This module is on the path of every tool call: the standard library and the guard only.
"""

from __future__ import annotations

import os

from ..value import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

    from ..config import Config
    from .hookio import HookCall


class Verdict(Record):
    """What the agent is told about a tool call: ``block`` or ``warn`` with the reason,
    or ``""`` (allowed, nothing to say)."""

    action: str = ""
    reason: str = ""
    #: The tool the call is to (an agent may word the reason around its name).
    tool: str = ""


def _where(cwd: str) -> tuple[str, Config]:
    """The project (repository top) of the call, and its settings."""
    from ..config import load_config
    from ..guard.record import project_root

    project = project_root(cwd)
    return project, load_config(os.path.join(project, ".voyager"))


def _checked_where(cwd: str, err: TextIO, hook: str) -> tuple[str, Config]:
    """`_where` for the check: a project config.toml that cannot be read (a cloned
    repository's, broken on purpose or not) is named on `err` and the check goes on
    with the personal settings. Failing on it would let `guard_fail` (open by default,
    and the user's own "closed" never read) allow every call the rules block."""
    from ..errors import ConfigError

    try:
        return _where(cwd)
    except ConfigError as exc:
        err.write(f"voyager-brain hook {hook}: {one_line(exc)}\n")
    from ..config import load_config
    from ..guard.record import project_root

    return project_root(cwd), load_config(None)


def check(call: HookCall, err: TextIO, hook: str = "claude pre-tool-use") -> Verdict:
    """The verdict on `call` (``tool`` and ``tool_input`` set), recorded in the history;
    `hook` (agent and event) names it in the line a failure writes on `err`.

    The decision is made from the rules before anything is written; recording it comes
    after and cannot change it (a busy history.db queues the row, `guard.spool`)."""
    tool, tool_input = call.tool, call.tool_input
    assert tool is not None and tool_input is not None
    fail_closed = False
    denial: str | None = None
    try:
        project, config = _checked_where(call.cwd, err, hook)
        fail_closed = config.guard_fail == "closed"
        # roleguard.ROLE_VARIABLE spelled out, not imported: outside a pipeline run this
        # lookup is all the role guard may cost.
        role = os.environ.get("VOYAGER_PIPELINE_ROLE")
        if role:
            denial = _role_denial(role, call, project, config)
        from ..guard.check import Decision, evaluate

        if denial is not None:
            # The role guard wins over the rules, so they are not even read. The call is
            # recorded like any checked one, as a block with no rule behind it (a
            # trigger needs a rule row); the reason goes in as its failed result, since
            # the call never runs and no post-tool hook will write one.
            decision = Decision("block")
        else:
            from ..guard.teamrules import rules_for_check

            # Reading never waits on a writer (WAL); a changed rules.toml whose sync
            # cannot get the write lock is read into memory instead.
            rules, problems = rules_for_check(project)
            for problem in problems:
                err.write(f"voyager-brain guard: {problem}\n")
            decision = evaluate(
                rules,
                tool,
                tool_input,
                threshold=config.semantic_threshold,
                reviewer=_reviewer(config),
            )
    except Exception as exc:
        err.write(f"voyager-brain hook {hook}: {one_line(exc)}\n")
        if denial is not None:
            # Decided before the history failed: a broken history.db must not let a
            # planner write code, whatever guard_fail says.
            return Verdict("block", denial, tool)
        if fail_closed:
            return Verdict(
                "block",
                f"voyager-brain guard could not check this call ({one_line(exc)}), and "
                'config.toml says guard_fail = "closed"',
                tool,
            )
        return Verdict()
    _record(call, decision, project, config, denial, err, hook)
    if denial is not None:
        return Verdict("block", denial, tool)
    for problem in decision.problems:
        err.write(f"voyager-brain guard: {problem}\n")
    if decision.action in ("block", "warn"):
        from ..guard.check import reason_text

        return Verdict(decision.action, reason_text(decision, tool), tool)
    return Verdict()


def _record(
    call: HookCall,
    decision: Any,
    project: str,
    config: Config,
    denial: str | None,
    err: TextIO,
    hook: str,
) -> None:
    """The decided call in the history: written, or queued when history.db is busy.
    Whatever happens here, the decision stands."""
    if call.session is None:
        err.write("voyager-brain guard: stdin: no session id; the call is not recorded\n")
        return
    assert call.tool is not None
    try:
        from ..guard.check import record_check

        record_check(
            decision,
            project=project,
            session=call.session,
            tool=call.tool,
            tool_input=call.tool_input,
            tool_use_id=call.tool_use_id,
            transcript_path=call.transcript,
            denial=denial,
            limit=config.tool_output_limit,
        )
    except Exception as exc:  # queued for a reason to tell, or not even queued
        err.write(f"voyager-brain hook {hook}: {one_line(exc)}\n")


def _role_denial(role: str, call: HookCall, project: str, config: Config) -> str | None:
    """The pipeline's role guard (`guard.roleguard`) for a call of a pipeline agent."""
    from ..guard.roleguard import PROJECT_VARIABLE, role_denial

    assert call.tool is not None and call.tool_input is not None
    return role_denial(
        role,
        call.tool,
        call.tool_input,
        # The engine names the project it runs; an agent that cd's into a nested
        # repository still writes only the run's .brain/.
        os.environ.get(PROJECT_VARIABLE) or project,
        call.cwd,
        config.pipeline.planner_bash,
    )


#: Seconds all of one call's model reviews may take in the hook. `install` gives the
#: tool-call hook 10 s (`install.HOOK_TIMEOUTS`), and an agent lets the call run when a
#: hook runs past its timeout: a review must end well inside it, whatever
#: ``model_timeout_seconds`` says, or a slow model would turn a block into an allow.
REVIEW_BUDGET = 5.0


class _BudgetedReviewer:
    """The model command under one deadline for every review of a call; past it a review
    fails, and a failed review keeps its match (`guard.check.review`)."""

    def __init__(self, provider: Any, budget: float) -> None:
        import time

        self._provider, self._clock = provider, time.monotonic
        self._deadline = self._clock() + budget
        self.name = provider.name

    def complete(self, prompt: str) -> str:
        from ..providers import ProviderError

        left = self._deadline - self._clock()
        if left <= 0:
            raise ProviderError(f"no time left for a review in the hook ({REVIEW_BUDGET:g}s)")
        self._provider.timeout = min(self._provider.timeout, left)
        answer: str = self._provider.complete(prompt)
        return answer


def _reviewer(config: Config) -> Any:
    """The model that reviews semantic matches, when `semantic_review` asks for one,
    within `REVIEW_BUDGET`."""
    if not config.semantic_review:
        return None
    from ..providers import get_provider

    provider = get_provider(config)
    return None if provider is None else _BudgetedReviewer(provider, REVIEW_BUDGET)


def record_result(call: HookCall, *, settle: bool = False) -> None:
    """The tool's result on the row its check wrote (a new row when it was not checked:
    hooks installed mid-session); queued when history.db is busy. To `settle` is to
    give a result only to a recorded call that has none."""
    from ..guard import spool

    assert call.tool is not None and call.session is not None
    project, config = _where(call.cwd)
    spool.write(
        spool.result_op(
            project=project,
            session=call.session,
            transcript=call.transcript,
            tool=call.tool,
            tool_input=call.tool_input,
            tool_use_id=call.tool_use_id,
            output=call.output,
            success=call.success,
            duration_ms=call.duration_ms,
            limit=config.tool_output_limit,
            settle=settle,
        )
    )


def record_prompt(call: HookCall) -> None:
    """The user's message, in a session opened again if the agent's turn end closed it;
    queued when history.db is busy."""
    from ..guard import spool

    assert call.session is not None and call.prompt is not None
    project, _ = _where(call.cwd)
    spool.write(
        spool.prompt_op(
            project=project, session=call.session, transcript=call.transcript, prompt=call.prompt
        )
    )


def close_session(call: HookCall, status: str = "completed") -> None:
    """The session's ``ended_at`` and ``status`` (a later call or prompt in the same
    session opens it again); queued when history.db is busy."""
    from ..guard import spool

    if call.session is None:
        return
    project, _ = _where(call.cwd)
    spool.write(
        spool.close_op(
            project=project, session=call.session, transcript=call.transcript, status=status
        )
    )


#: The keys of an MCP tool's whole result (CallToolResult), as Codex CLI 0.171 sends it.
MCP_RESULT_KEYS = frozenset({"content", "structuredContent", "isError", "_meta"})


def response_text(response: Any) -> str | None:
    """A tool's response as text: a shell's stdout and stderr, a string as it is, an MCP
    tool's content blocks (a list of ``{"type": "text", "text": ...}``, as Claude Code
    2.1.197 sends them) as their texts, and so its whole result (``content``,
    ``structuredContent``, ``isError``, as Codex 0.171 sends it: the structured content
    when there are no blocks), anything else as JSON."""
    from .. import cjson

    if response is None:
        return None
    if isinstance(response, str):
        return response
    if isinstance(response, dict) and ("stdout" in response or "stderr" in response):
        parts = [str(response.get(k) or "") for k in ("stdout", "stderr")]
        return "\n".join(p for p in parts if p)
    if (
        isinstance(response, dict)
        and isinstance(response.get("content"), list)
        and response.keys() <= MCP_RESULT_KEYS
    ):
        if not response["content"] and "structuredContent" in response:
            return cjson.dumps(response["structuredContent"], ensure_ascii=False)
        return response_text(response["content"])
    if (
        isinstance(response, list)
        and response
        and all(isinstance(b, dict) and b.get("type") == "text" for b in response)
    ):
        return "\n".join(str(b.get("text", "")) for b in response)
    return cjson.dumps(response, ensure_ascii=False)


def one_line(exc: BaseException) -> str:
    message = str(exc)
    return message.splitlines()[0] if message else type(exc).__name__
