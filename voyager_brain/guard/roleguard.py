"""The pipeline's role guard: the planners write their plans, not the code (seed 004).

The pipeline engine starts each agent with ``VOYAGER_PIPELINE_ROLE`` (and
``VOYAGER_PIPELINE_PROJECT``, the project's root) in its environment, which the agent's
hooks inherit. While the role is a planner's (`PLANNERS`):

- Write, Edit, MultiEdit and NotebookEdit may only target a file inside the project's
  ``.brain/`` folder, judged on the real path (relative to the call's working folder,
  ``~`` expanded, ``..`` and symbolic links resolved), so no spelling and no link leads
  out of it;
- Bash is denied, unless ``[pipeline] planner_bash = true``: a shell writes anywhere.

The builder, the reviewer and any other role are not restricted, and neither is any
other tool (Read, Grep, Glob, WebFetch ...): reading is what planners are for.

Standard library only: the hook imports this before every tool call of a pipeline agent.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The variables the engine sets for the agents it starts.
ROLE_VARIABLE = "VOYAGER_PIPELINE_ROLE"
PROJECT_VARIABLE = "VOYAGER_PIPELINE_PROJECT"

#: `pipeline.state.BRAIN_DIR`, repeated: the guard sits below the pipeline package.
BRAIN_DIR = ".brain"

#: The roles restricted, with what each writes and what to do with a change instead.
PLANNERS: dict[str, tuple[str, str]] = {
    "scout": (
        "RESEARCH/, ...",
        "Write what you found in .brain/RESEARCH/ for the architect.",
    ),
    "architect": (
        "PLAN.md, DECISIONS.md, ...",
        "Put the change in the plan for the builder.",
    ),
}

#: The tools that write a file, and the input fields naming it (the first one present).
WRITERS: dict[str, tuple[str, ...]] = {
    "Write": ("file_path",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path", "file_path"),
}

_HEAD = "voyager-brain pipeline role guard: "


def role_denial(
    role: str,
    tool: str,
    tool_input: Any,
    project: str,
    cwd: str | None,
    planner_bash: bool,
) -> str | None:
    """Why `role` may not make this call (the text the agent is told), or None.

    `project` is the project's root; `cwd` the folder relative paths are read from
    (None: this process's)."""
    planner = PLANNERS.get(role)
    if planner is None:
        return None
    if tool == "Bash":
        if planner_bash:
            return None
        return (
            f"{_HEAD}the {role} may not run Bash ([pipeline] planner_bash is false in "
            ".voyager/config.toml). Read with Read, Grep and Glob, and leave commands to "
            "the builder."
        )
    fields = WRITERS.get(tool)
    if fields is None:
        return None
    writes, instead = planner
    where = f"the {role} may only write inside {BRAIN_DIR}/ ({writes})"
    path = _named_path(tool_input, fields)
    if not isinstance(path, str) or not path:
        # A path we cannot judge is refused: the tool would fail on it anyway, and an
        # allow would have to trust what the tool makes of it.
        return f"{_HEAD}{where}; this {tool} call names no file ({fields[0]}). {instead}"
    brain = os.path.realpath(os.path.join(project, BRAIN_DIR))
    try:
        given = os.path.join(cwd or os.getcwd(), os.path.expanduser(path))
        target = os.path.realpath(given)
    except (OSError, ValueError):  # a NUL byte, a working folder that is gone
        return f"{_HEAD}{where}; `{path}` cannot be resolved. {instead}"
    if target.startswith(brain + os.sep):
        return None
    if target == brain:
        return f"{_HEAD}{where}; `{path}` is the folder itself, not a file in it. {instead}"
    # Spelled inside .brain/ yet resolved outside: a symbolic link leads out, and the
    # agent would not see why without being told where it goes.
    spelled = os.path.normpath(given)
    folders = (brain, os.path.normpath(os.path.join(project, BRAIN_DIR)))
    via = f" (a symbolic link leads it to `{target}`)" if _under(spelled, folders) else ""
    return f"{_HEAD}{where}; `{path}` is outside{via}. {instead}"


def _under(path: str, folders: tuple[str, ...]) -> bool:
    return any(path.startswith(folder + os.sep) for folder in folders)


def _named_path(tool_input: Any, fields: tuple[str, ...]) -> Any:
    """The value of the first of `fields` present in `tool_input`; a present but empty
    or non-string value is kept, not skipped, so that it is refused."""
    if not isinstance(tool_input, dict):
        return None
    for name in fields:
        value = tool_input.get(name)
        if value is not None:
            return value
    return None
