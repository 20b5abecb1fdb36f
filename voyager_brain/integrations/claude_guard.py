"""Claude Code's tool-call hooks: the guard check and the session history.

==================  ==============================================================
hook event          what it does
==================  ==============================================================
PreToolUse          check the call against the pipeline's role guard, then the
                    guard rules; record it and every rule that fired; deny (block),
                    warn, or say nothing (log, none)
PostToolUse         record the tool's result on its row (output cut and redacted)
PostToolUseFailure  the same, with ``success`` 0 and the error as output
UserPromptSubmit    record the user's message
==================  ==============================================================

(Stop and SessionEnd, in `claude`, also close the session in the history.)

Output of PreToolUse, exit code 0 always:

- block: ``hookSpecificOutput.permissionDecision = "deny"`` with a reason naming each
  matching rule, its problem and its solution;
- warn: no permission decision (the user's own permission flow stands; never
  ``allow``, which would skip it): ``hookSpecificOutput.additionalContext`` tells the
  agent, the top-level ``systemMessage`` tells the user;
- log or no match: nothing.

When the check itself fails (history.db locked past its timeout or corrupt, a bug), the
call is allowed with one line on stderr; ``guard_fail = "closed"`` in config.toml
denies it instead; a call the role guard has already denied stays denied. Input the
hook cannot read is always let through, with one line.

This module is on the path of every tool call: the standard library and the guard only.
"""

from __future__ import annotations

import json
import os
import sys

from .hookio import HookInputError, read_payload

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TextIO

    from ..config import Config

EVENTS = {
    "pre-tool-use": "PreToolUse",
    "post-tool-use": "PostToolUse",
    "post-tool-use-failure": "PostToolUseFailure",
    "user-prompt-submit": "UserPromptSubmit",
}


def _text(payload: Mapping[str, Any], key: str, *, required: bool = True) -> str | None:
    value = payload.get(key)
    if isinstance(value, str) and value:
        return value
    if required:
        raise HookInputError(f"stdin: {key}: expected a non-empty string")
    return None


def _where(payload: Mapping[str, Any]) -> tuple[str, Config]:
    """The project (repository top) of the call, and its settings."""
    from ..config import load_config
    from ..guard.record import project_root

    project = project_root(str(payload.get("cwd") or os.getcwd()))
    return project, load_config(os.path.join(project, ".voyager"))


def pre_tool_use(payload: Mapping[str, Any], out: TextIO, err: TextIO) -> None:
    tool = _text(payload, "tool_name")
    assert tool is not None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise HookInputError("stdin: tool_input: expected a JSON object")
    session = _text(payload, "session_id", required=False)
    fail_closed = False
    denial: str | None = None
    try:
        project, config = _where(payload)
        fail_closed = config.guard_fail == "closed"
        # roleguard.ROLE_VARIABLE spelled out, not imported: outside a pipeline run this
        # lookup is all the role guard may cost.
        role = os.environ.get("VOYAGER_PIPELINE_ROLE")
        if role:
            denial = _role_denial(role, tool, tool_input, payload, project, config)
        from ..guard.check import Decision, evaluate, record_check
        from ..guard.db import connect

        if denial is not None:
            # The role guard wins over the rules, so they are not even read. The call is
            # recorded like any checked one, as a block with no rule behind it (a
            # trigger needs a rule row); the reason goes in as its failed result, since
            # the call never runs and no PostToolUse will write one.
            decision = Decision("block")
            db = connect() if session is not None else None
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
        if session is None or db is None:
            err.write("voyager-brain guard: stdin: no session_id; the call is not recorded\n")
        else:
            decision = record_check(
                db,
                decision,
                project=project,
                session=session,
                tool=tool,
                tool_input=tool_input,
                tool_use_id=_text(payload, "tool_use_id", required=False),
                transcript_path=_text(payload, "transcript_path", required=False),
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
        message = _one_line(exc)
        if denial is not None:
            # Decided before the history failed: a broken history.db must not let a
            # planner write code, whatever guard_fail says.
            out.write(_deny(denial))
        elif fail_closed:
            reason = (
                f"voyager-brain guard could not check this call ({message}), and "
                'config.toml says guard_fail = "closed"'
            )
            out.write(_deny(reason))
        err.write(f"voyager-brain hook claude pre-tool-use: {message}\n")
        return
    if denial is not None:
        out.write(_deny(denial))
        return
    for problem in decision.problems:
        err.write(f"voyager-brain guard: {problem}\n")
    from ..guard.check import reason_text

    if decision.action == "block":
        out.write(_deny(reason_text(decision, tool)))
    elif decision.action == "warn":
        text = reason_text(decision, tool)
        output = {
            "systemMessage": text,
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text},
        }
        out.write(json.dumps(output, ensure_ascii=False) + "\n")


def _role_denial(
    role: str,
    tool: str,
    tool_input: Mapping[str, Any],
    payload: Mapping[str, Any],
    project: str,
    config: Config,
) -> str | None:
    """The pipeline's role guard (`guard.roleguard`) for a call of a pipeline agent."""
    from ..guard.roleguard import PROJECT_VARIABLE, role_denial

    cwd = payload.get("cwd")
    return role_denial(
        role,
        tool,
        tool_input,
        # The engine names the project it runs; an agent that cd's into a nested
        # repository still writes only the run's .brain/.
        os.environ.get(PROJECT_VARIABLE) or project,
        cwd if isinstance(cwd, str) and cwd else None,
        config.pipeline.planner_bash,
    )


def _reviewer(config: Config) -> Any:
    """The model that reviews semantic matches, when `semantic_review` asks for one."""
    if not config.semantic_review:
        return None
    from ..providers import get_provider

    return get_provider(config)


def _deny(reason: str) -> str:
    output = {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }
    return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False) + "\n"


def _response_text(response: Any) -> str | None:
    """A tool's response as text: Bash's stdout and stderr, a string as it is, anything
    else as JSON."""
    if response is None:
        return None
    if isinstance(response, str):
        return response
    if isinstance(response, dict) and ("stdout" in response or "stderr" in response):
        parts = [str(response.get(k) or "") for k in ("stdout", "stderr")]
        return "\n".join(p for p in parts if p)
    return json.dumps(response, ensure_ascii=False)


def _failed(response: Any) -> bool:
    if not isinstance(response, dict):
        return False
    return bool(
        response.get("is_error") or response.get("interrupted") or response.get("success") is False
    )


def _post(payload: Mapping[str, Any], *, failure: bool) -> None:
    from ..guard import record
    from ..guard.db import connect, transaction

    tool = _text(payload, "tool_name")
    session = _text(payload, "session_id")
    tool_use_id = _text(payload, "tool_use_id", required=False)
    assert tool is not None and session is not None
    output: str | None
    if failure:
        output = str(payload.get("error") or "the tool failed")
        success = False
    else:
        response = payload.get("tool_response")
        output, success = _response_text(response), not _failed(response)
    project, config = _where(payload)
    db = connect()
    with transaction(db):
        row = None
        if tool_use_id:
            row = db.execute(
                "SELECT id, timestamp FROM tool_calls WHERE external_id = ?", (tool_use_id,)
            ).fetchone()
        if row is None:  # the call was not checked (hooks installed mid-session)
            sid = record.session_in(db, session, project)
            message = record.current_assistant_message(db, sid)
            call = record.add_tool_call(
                db, message, tool, payload.get("tool_input"), external_id=tool_use_id
            )
            duration = None
        else:
            call = int(row[0])
            started = record.seconds(str(row[1]))
            finished = record.seconds(record.now())
            duration = None
            if started is not None and finished is not None and finished >= started:
                duration = round((finished - started) * 1000)
        given = payload.get("duration_ms")
        if isinstance(given, int) and not isinstance(given, bool) and given >= 0:
            duration = given
        record.set_tool_result(
            db, call, output, success=success, duration_ms=duration, limit=config.tool_output_limit
        )


def post_tool_use(payload: Mapping[str, Any], out: TextIO, err: TextIO) -> None:
    _post(payload, failure=False)


def post_tool_use_failure(payload: Mapping[str, Any], out: TextIO, err: TextIO) -> None:
    _post(payload, failure=True)


def user_prompt_submit(payload: Mapping[str, Any], out: TextIO, err: TextIO) -> None:
    from ..guard import record
    from ..guard.db import connect, transaction

    session = _text(payload, "session_id")
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise HookInputError("stdin: prompt: expected a string")
    assert session is not None
    project, _ = _where(payload)
    db = connect()
    with transaction(db):
        sid = record.session_in(
            db, session, project, _text(payload, "transcript_path", required=False)
        )
        record.reopen_session(db, sid)
        record.add_message(db, sid, "user", prompt)


def close_session(payload: Mapping[str, Any], status: str) -> None:
    """Stop and SessionEnd: the session's ``ended_at`` and ``status`` (a later call or
    prompt in the same session opens it again)."""
    from ..guard import record
    from ..guard.db import connect, transaction

    session = _text(payload, "session_id", required=False)
    if session is None:
        return
    project, _ = _where(payload)
    db = connect()
    with transaction(db):
        sid = record.session_in(
            db, session, project, _text(payload, "transcript_path", required=False)
        )
        record.end_session(db, sid, status)


HANDLERS: dict[str, Callable[[Mapping[str, Any], TextIO, TextIO], None]] = {
    "pre-tool-use": pre_tool_use,
    "post-tool-use": post_tool_use,
    "post-tool-use-failure": post_tool_use_failure,
    "user-prompt-submit": user_prompt_submit,
}


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def run(
    event: str, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr
) -> int:
    """Run one tool-call hook. Always returns 0: a hook must never break the agent."""
    try:
        handler = HANDLERS[event]
        payload = read_payload(stdin)
        handler(payload, stdout, stderr)
    except Exception as exc:
        stderr.write(f"voyager-brain hook claude {event}: {_one_line(exc)}\n")
    return 0
