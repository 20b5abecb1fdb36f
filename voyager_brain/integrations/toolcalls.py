"""The guard and the session history behind every agent's tool-call hooks (seed 003).

An adapter reads its agent's payload into a `HookCall` (tool names in Claude Code's
terms) and renders the `Verdict` in its agent's format; everything between is here:

- `check`: the pipeline's role guard, then the guard rules; the call and every rule
  that fired are recorded. The verdict is ``block`` with the reason (each matching rule,
  its problem and its solution), ``warn`` with the same kind of text, or nothing.
- `record_result`: the tool's result on its row (output cut and redacted).
- `record_prompt`: the user's message.
- `close_session`: the session's end (a later call or prompt opens it again).

When the check itself fails (history.db locked past its timeout or corrupt, a bug), the
call is allowed with one line on stderr; ``guard_fail = "closed"`` in config.toml blocks
it instead; a call the role guard has already denied stays denied.

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


def _where(cwd: str) -> tuple[str, Config]:
    """The project (repository top) of the call, and its settings."""
    from ..config import load_config
    from ..guard.record import project_root

    project = project_root(cwd)
    return project, load_config(os.path.join(project, ".voyager"))


def check(call: HookCall, err: TextIO, hook: str = "claude pre-tool-use") -> Verdict:
    """The verdict on `call` (``tool`` and ``tool_input`` set), recorded in the history;
    `hook` (agent and event) names it in the line a failure writes on `err`."""
    tool, tool_input = call.tool, call.tool_input
    assert tool is not None and tool_input is not None
    fail_closed = False
    denial: str | None = None
    try:
        project, config = _where(call.cwd)
        fail_closed = config.guard_fail == "closed"
        # roleguard.ROLE_VARIABLE spelled out, not imported: outside a pipeline run this
        # lookup is all the role guard may cost.
        role = os.environ.get("VOYAGER_PIPELINE_ROLE")
        if role:
            denial = _role_denial(role, call, project, config)
        from ..guard.check import Decision, evaluate, record_check
        from ..guard.db import connect

        if denial is not None:
            # The role guard wins over the rules, so they are not even read. The call is
            # recorded like any checked one, as a block with no rule behind it (a
            # trigger needs a rule row); the reason goes in as its failed result, since
            # the call never runs and no post-tool hook will write one.
            decision = Decision("block")
            db = connect() if call.session is not None else None
        else:
            from ..guard.rules import list_rules

            db = connect()
            if os.path.exists(os.path.join(project, ".voyager", "rules.toml")):
                from ..guard.teamrules import sync_team_rules

                for problem in sync_team_rules(db, project):
                    err.write(f"voyager-brain guard: {problem}\n")
            rules = list_rules(db, project=project)
            decision = evaluate(
                rules,
                tool,
                tool_input,
                threshold=config.semantic_threshold,
                reviewer=_reviewer(config),
            )
        if call.session is None or db is None:
            err.write("voyager-brain guard: stdin: no session id; the call is not recorded\n")
        else:
            decision = record_check(
                db,
                decision,
                project=project,
                session=call.session,
                tool=tool,
                tool_input=tool_input,
                tool_use_id=call.tool_use_id,
                transcript_path=call.transcript,
            )
            if denial is not None and decision.tool_call_id is not None:
                from ..guard.db import transaction
                from ..guard.record import set_tool_result

                with transaction(db):
                    set_tool_result(
                        db,
                        decision.tool_call_id,
                        denial,
                        success=False,
                        limit=config.tool_output_limit,
                    )
    except Exception as exc:
        err.write(f"voyager-brain hook {hook}: {one_line(exc)}\n")
        if denial is not None:
            # Decided before the history failed: a broken history.db must not let a
            # planner write code, whatever guard_fail says.
            return Verdict("block", denial)
        if fail_closed:
            return Verdict(
                "block",
                f"voyager-brain guard could not check this call ({one_line(exc)}), and "
                'config.toml says guard_fail = "closed"',
            )
        return Verdict()
    if denial is not None:
        return Verdict("block", denial)
    for problem in decision.problems:
        err.write(f"voyager-brain guard: {problem}\n")
    if decision.action in ("block", "warn"):
        from ..guard.check import reason_text

        return Verdict(decision.action, reason_text(decision, tool))
    return Verdict()


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


def _reviewer(config: Config) -> Any:
    """The model that reviews semantic matches, when `semantic_review` asks for one."""
    if not config.semantic_review:
        return None
    from ..providers import get_provider

    return get_provider(config)


def record_result(call: HookCall) -> None:
    """The tool's result on the row its check wrote (a new row when it was not checked:
    hooks installed mid-session)."""
    from ..guard import record
    from ..guard.db import connect, transaction

    assert call.tool is not None and call.session is not None
    project, config = _where(call.cwd)
    db = connect()
    with transaction(db):
        row = None
        if call.tool_use_id:
            row = db.execute(
                "SELECT id, timestamp FROM tool_calls WHERE external_id = ?", (call.tool_use_id,)
            ).fetchone()
        duration = None
        if row is None:
            sid = record.session_in(db, call.session, project, call.transcript)
            message = record.current_assistant_message(db, sid)
            tool_id = record.add_tool_call(
                db, message, call.tool, call.tool_input, external_id=call.tool_use_id
            )
        else:
            tool_id = int(row[0])
            started = record.seconds(str(row[1]))
            finished = record.seconds(record.now())
            if started is not None and finished is not None and finished >= started:
                duration = round((finished - started) * 1000)
        if call.duration_ms is not None:
            duration = call.duration_ms
        record.set_tool_result(
            db,
            tool_id,
            call.output,
            success=call.success,
            duration_ms=duration,
            limit=config.tool_output_limit,
        )


def record_prompt(call: HookCall) -> None:
    """The user's message, in a session opened again if the agent's turn end closed it."""
    from ..guard import record
    from ..guard.db import connect, transaction

    assert call.session is not None and call.prompt is not None
    project, _ = _where(call.cwd)
    db = connect()
    with transaction(db):
        sid = record.session_in(db, call.session, project, call.transcript)
        record.reopen_session(db, sid)
        record.add_message(db, sid, "user", call.prompt)


def close_session(call: HookCall, status: str = "completed") -> None:
    """The session's ``ended_at`` and ``status`` (a later call or prompt in the same
    session opens it again)."""
    from ..guard import record
    from ..guard.db import connect, transaction

    if call.session is None:
        return
    project, _ = _where(call.cwd)
    db = connect()
    with transaction(db):
        sid = record.session_in(db, call.session, project, call.transcript)
        record.end_session(db, sid, status)


def response_text(response: Any) -> str | None:
    """A tool's response as text: a shell's stdout and stderr, a string as it is,
    anything else as JSON."""
    import json

    if response is None:
        return None
    if isinstance(response, str):
        return response
    if isinstance(response, dict) and ("stdout" in response or "stderr" in response):
        parts = [str(response.get(k) or "") for k in ("stdout", "stderr")]
        return "\n".join(p for p in parts if p)
    return json.dumps(response, ensure_ascii=False)


def exit_failed(output: str | None) -> bool:
    """Whether a shell's output, as Codex and Gemini CLI report it, says the command
    exited non-zero ("Exit code: 1", "Process exited with code 1", "[Exit Code: 1]").
    Only the first two and last three lines are read: the command's own output may
    mention exit codes."""
    import re

    if not output:
        return False
    lines = output.splitlines()
    ends = "\n".join(lines[:2] + lines[-3:])
    found = re.search(r"(?:Exit [Cc]ode:|exited with code)\s*(-?\d+)", ends)
    return found is not None and int(found.group(1)) != 0


def one_line(exc: BaseException) -> str:
    message = str(exc)
    return message.splitlines()[0] if message else type(exc).__name__
