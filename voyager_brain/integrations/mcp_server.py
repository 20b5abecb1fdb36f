"""`voyager-brain mcp`: this project's memory served to an agent over MCP (stdio).

Each tool is a thin layer over the library call its command-line twin makes:

=============  ==============================  ==============================================
tool           command line                    library
=============  ==============================  ==============================================
brain          ``brain action=...``            `memory.tool.brain_tool` (seed 001)
status         ``status --json``               `session.reports.status_report`
add            ``add TYPE TEXT``               `session.reports.add_entry`
compact        ``compact``                     `BrainManager.compact`
context        ``context --budget N``          `session.cachedcontext.context_text`
recall         ``recall QUERY --json``         `BrainManager.recall`
save           ``save``                        `state.validate`, `session.reports.save_state`
rules_add      ``rules add``                   `guard.rules.add_given_rule`
rules_test     ``rules test``                  `guard.dryrun.dry_run`
=============  ==============================  ==============================================

and the resource ``voyager://context`` (the same document as ``context``). A tool answers
with JSON, the shape ``--json`` prints (``brain``: its message, the result as structured
content; ``context``: the document). A user error (`BrainError`, an unreadable file) is a
tool error whose text is the line the command line prints, ``voyager-brain: <message>``;
the server goes on serving. Calls run one at a time (the SDK runs each on a worker
thread; the library's caches and history.db connections are not shared between threads).

The MCP SDK (``mcp`` 2.x, the ``voyager-brain[mcp]`` extra) and pydantic are imported
inside `build_server` only: nothing here is on a hook's path.
"""

# Not `from __future__ import annotations`: the SDK reads a tool's parameters from its
# evaluated annotations, and the tools are defined inside `build_server`, next to the
# SDK and pydantic names those annotations use.

import inspect
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from .. import repo
from ..errors import BrainError, InvalidEntryError, NotInRepositoryError, one_line
from ..session.manager import BrainManager
from .mcpwire import printable

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

SERVER_NAME = "voyager-brain"
CONTEXT_URI = "voyager://context"
#: The smallest context budget, as `voyager-brain context --budget` takes it.
MIN_BUDGET = 50
INSTRUCTIONS = (
    "Memory for this project, kept in its git repository (.voyager/). Read `context` (or "
    "the voyager://context resource) when a task starts: what earlier sessions learned and "
    "decided. Keep a durable fact with `brain` (action=add type=learning text=...); note "
    "what you observe or decide during the session with `add`; record the project's "
    "state (decisions, next steps, known issues) with `save` before you finish."
)


class SDKMissingError(BrainError):
    """The MCP SDK (``mcp`` 2.x) is not installed."""


def error_line(exc: BaseException) -> str:
    """The one line the command line prints for a user error (see `cli/common.py`)."""
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        message = f"{where}{exc.strerror or exc}"
    else:
        message = str(exc)
    return f"voyager-brain: {one_line(message)}"


def to_json(data: Any) -> str:
    """JSON as ``--json`` prints it."""
    return json.dumps(data, indent=2, ensure_ascii=False)


# -- what each tool does, over the library ----------------------------------------------


def manager(root: Path) -> BrainManager:
    """The BrainManager of the repository `root` is in; `NotInRepositoryError` outside."""
    if repo.find_top(root) is None:
        raise NotInRepositoryError(root.absolute())
    return BrainManager(root)


def status_data(root: Path) -> dict[str, Any]:
    """What `voyager-brain status --json` prints."""
    from ..session.reports import status_report

    return status_report(manager(root))


def add_entry(root: Path, entry_type: str, text: str, source: str | None) -> dict[str, Any]:
    """Add a brain.md entry and save it: what `voyager-brain add --json` prints."""
    from ..session import reports

    if not text.strip():
        raise InvalidEntryError("text: empty; give the entry's markdown")
    return reports.add_entry(manager(root), entry_type, text, source).to_dict()


def compact_brain(root: Path) -> dict[str, Any]:
    """Compact brain.md to its budget: what `voyager-brain compact --json` prints."""
    bm = manager(root)
    bm.load()
    return bm.compact().to_dict()


def context_text(root: Path, budget: int | None) -> str:
    """The session-start document, from the context cache when it is still current."""
    from ..session import cachedcontext

    if budget is not None and budget < MIN_BUDGET:
        raise InvalidEntryError(f"budget: expected at least {MIN_BUDGET} tokens, got {budget}")
    return cachedcontext.context_text(root, budget)


def recall_data(root: Path, query: str, limit: int) -> dict[str, Any]:
    """The best matches in every store: what `voyager-brain recall --json` prints."""
    from ..session.manager import recall_anywhere

    hits = recall_anywhere(root, query, limit)  # the personal log needs no repository
    return {"query": query, "results": [hit.to_dict() for hit in hits]}


def save_state(root: Path, update: Any) -> dict[str, Any]:
    """Merge a partial brain.json and save it: what `voyager-brain save --json` prints."""
    from ..session import reports
    from ..state.validate import validate

    unknown = validate(update, "update")
    if unknown:
        # The command line keeps fields another tool added to a file; an agent's call
        # naming a field brain.json lacks is a mistake, told rather than stored.
        raise BrainError(
            f"update: {', '.join(unknown)}: brain.json has no such field; nothing was saved"
        )
    return reports.save_state(manager(root), update, unknown).to_dict()


def add_guard_rule(**fields: Any) -> dict[str, Any]:
    """Add a guard rule to history.db (`fields`: those of `guard.rules.add_given_rule`):
    what `voyager-brain rules add --json` prints."""
    from ..guard.db import close_all
    from ..guard.rules import add_given_rule

    try:
        return add_given_rule(**fields).to_dict()
    finally:
        close_all()  # calls run on the SDK's worker threads, which come and go


def check_tool_call(
    root: Path,
    tool: str,
    tool_input: dict[str, Any],
    project: str | None = None,
    embedder: str | None = None,
) -> dict[str, Any]:
    """The pre-tool-use check of one call, nothing recorded: what `voyager-brain rules
    test --json` prints, with the guard's notes (``problems``) and, when the call is
    blocked or warned about, the text the agent would be told (``reason``)."""
    from ..guard.db import close_all
    from ..guard.dryrun import dry_run
    from ..guard.rules import project_folder

    path = project_folder(Path(project).expanduser() if project is not None else root)
    try:
        run = dry_run(path, tool, tool_input, embedder=embedder)
    finally:
        close_all()
    result = {**run.to_dict(), "problems": list(run.problems)}
    if run.reason is not None:
        result["reason"] = run.reason
    return result


# -- the server -------------------------------------------------------------------------


def build_server(root: Path | None = None, *, version: str = "") -> "MCPServer":
    """The MCP server for the project `root` is in (default: the current folder),
    introducing itself as voyager-brain `version` (the package's ``__version__``, which
    the command line passes: this layer sits below the package's public names).

    Raises `SDKMissingError` when the MCP SDK 2.x is not installed.
    """
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ResourceError
        from mcp.types import CallToolResult, TextContent, ToolAnnotations
        from pydantic import Field, WithJsonSchema
    except ImportError as exc:
        raise SDKMissingError(
            f'the MCP server needs the MCP SDK 2.x ({exc}); pip install "voyager-brain[mcp]"'
        ) from None
    from ..guard import rules as guard_rules
    from ..memory import log, schedule
    from ..memory import tool as memory_tool
    from ..memory.store import PERSONAL, PROJECT
    from ..session.model import ENTRY_TYPES

    start = (root if root is not None else Path.cwd()).absolute()
    one_at_a_time = threading.Lock()

    def reply(
        work: Callable[[], Any], text: Callable[[dict[str, Any]], str] = to_json
    ) -> CallToolResult:
        """Run `work`; a str answers as it is, a dict as `text` of it (JSON unless said)
        and as structured content; a user error as one line with isError."""
        with one_at_a_time:
            try:
                data = printable(work())
            except (BrainError, OSError) as exc:
                line = TextContent(type="text", text=printable(error_line(exc)))
                return CallToolResult(content=[line], is_error=True)
        if isinstance(data, str):
            return CallToolResult(content=[TextContent(type="text", text=data)])
        return CallToolResult(
            content=[TextContent(type="text", text=text(data))], structured_content=data
        )

    def one_of(*values: str) -> WithJsonSchema:
        """A string the schema offers `values` for. The library checks the value itself,
        so that a wrong one is told in its one line, as on the command line."""
        return WithJsonSchema({"type": "string", "enum": list(values)})

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    adds = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    rewrites = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
    server: MCPServer = MCPServer(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        version=version,
        log_level="WARNING",
    )

    # -- brain: the memory logs (seed 001) ------------------------------------------------

    Text = str | None

    @server.tool(annotations=ToolAnnotations(open_world_hint=False))
    def brain(
        action: Annotated[
            str,
            one_of(*memory_tool.ACTIONS),
            Field(
                description="add, update (by id), remove (by id, or type + key/path), list, "
                "decay (archive stale learnings), task_done (id), task_clear, reminder_run "
                "(id, result)."
            ),
        ],
        type: Annotated[
            Annotated[str, one_of(*(t for t in log.ENTRY_TYPES if t != "tombstone"))] | None,
            Field(description="Entry type (add; list filters by it; remove by natural key)."),
        ] = None,
        id: Annotated[Text, Field(description="Entry id (update, remove, task_done).")] = None,
        text: Annotated[Text, Field(description="learning, preference, behavior: the text")] = None,
        category: Annotated[
            Text,
            Field(description="behavior: do, dont or value; preference: Code, Tools, ..."),
        ] = None,
        key: Annotated[Text, Field(description="identity, user, meta: the key.")] = None,
        value: Annotated[Text, Field(description="identity, user, meta: the value.")] = None,
        description: Annotated[Text, Field(description="task: what to do.")] = None,
        content: Annotated[Text, Field(description="context: the text about a path.")] = None,
        path: Annotated[Text, Field(description="context: the path it is about.")] = None,
        project: Annotated[Text, Field(description="context: the project's name.")] = None,
        priority: Annotated[
            Annotated[str, one_of(*schedule.PRIORITIES)] | None,
            Field(description="task, reminder: the priority (default normal)."),
        ] = None,
        due: Annotated[Text, Field(description="task: due date, YYYY-MM-DD.")] = None,
        tags: Annotated[str | list[str] | None, Field(description="task, reminder: tags.")] = None,
        cadence: Annotated[
            str | dict[str, Any] | None,
            Field(
                description='reminder: {"kind": "interval", "every": "6h"}, {"kind": '
                '"daily", "at": "08:00"}, or "6h" / "daily 08:00".'
            ),
        ] = None,
        enabled: Annotated[bool | None, Field(description="reminder: on or off.")] = None,
        store: Annotated[
            Annotated[str, one_of(PERSONAL, PROJECT)] | None,
            Field(
                description="The log to add to: personal (yours, every project) or project "
                "(.voyager/memory.jsonl, shared in git). Default by type."
            ),
        ] = None,
        source: Annotated[Text, Field(description="learning: auto or manual.")] = None,
        scope: Annotated[Text, Field(description="learning: global or project.")] = None,
        reason: Annotated[Text, Field(description="remove: why (kept in the log).")] = None,
        query: Annotated[Text, Field(description="list: text to search for.")] = None,
        filter: Annotated[
            Annotated[str, one_of(*schedule.FILTERS)] | None,
            Field(description="list: pending or done tasks, active reminders."),
        ] = None,
        verbose: Annotated[bool | None, Field(description="list: each entry as JSON.")] = None,
        result: Annotated[
            Annotated[str, one_of(*schedule.RESULTS)] | None,
            Field(description="reminder_run: how the run went."),
        ] = None,
        error: Annotated[Text, Field(description="reminder_run: what went wrong.")] = None,
    ) -> CallToolResult:
        """The memory logs' brain tool (seed 001): learnings, preferences, behaviors,
        identity and user facts, project context, tasks and reminders, kept in your
        personal log and the project's .voyager/memory.jsonl. Answers with the tool's
        message ("Added learning a1b2c3d4: ..."); the full result (ok, message, entries)
        is the structured content.

        Examples: action=add type=learning text="This repo uses pnpm not npm";
        action=add type=task description="Fix CI" priority=high; action=list
        type=learning query=pnpm; action=remove id=a1b2c3d4 reason="No longer true"."""
        given = locals()  # first: the parameters (and the names the body uses) only
        # The tool tells a parameter left out from one given: pass only those given.
        params = {k: v for k, v in given.items() if k in brain_fields and v is not None}
        return reply(
            lambda: memory_tool.brain_tool(action, cwd=str(start), **params),
            text=lambda data: str(data["message"]),
        )

    brain_fields = set(inspect.signature(brain).parameters) - {"action"}

    # -- the session brain (brain.md) -----------------------------------------------------

    @server.tool(annotations=read_only)
    def status() -> CallToolResult:
        """The session brain at a glance: brain.md's size against its compaction budget,
        entries by type, branch, uncommitted brain files, and brain.json's sections,
        goal and blockers. The same JSON as `voyager-brain status --json`."""
        return reply(lambda: status_data(start))

    @server.tool(annotations=adds)
    def add(
        type: Annotated[
            str,
            one_of(*ENTRY_TYPES),
            Field(
                description="observation (what you noticed), decision (what was decided "
                "and why), loop_status (where the work stands), reflection (a lesson)."
            ),
        ],
        text: Annotated[str, Field(description="The entry's markdown.")],
        source: Annotated[
            Text, Field(description="Who wrote it: an agent's name, a hook, a person.")
        ] = None,
    ) -> CallToolResult:
        """Add a timestamped entry to the session brain (.voyager/brain.md) and save it;
        secrets in the text are redacted. Answers with {added, path, entry}; added is
        false when the same entry was already there."""
        return reply(lambda: add_entry(start, type, text, source))

    @server.tool(annotations=rewrites)
    def compact() -> CallToolResult:
        """Summarize and prune brain.md until it fits its token budget: keeps every
        decision and the newest loop status, merges duplicate observations, folds the
        oldest observations and reflections into one summary. Answers with the report
        (entries and tokens before and after)."""
        return reply(lambda: compact_brain(start))

    # -- the context ----------------------------------------------------------------------

    Budget = Annotated[
        Annotated[int, WithJsonSchema({"type": "integer", "minimum": MIN_BUDGET})] | None,
        Field(description=f"Token budget, at least {MIN_BUDGET} (default: prompt_budget)."),
    ]

    @server.tool(annotations=read_only)
    def context(budget: Budget = None) -> CallToolResult:
        """The document injected at session start: identity and user, behavior,
        preferences, the project state, project context, the session brain, what is
        due, and learnings ranked by score, within a token budget. Read it when a task
        starts."""
        return reply(lambda: context_text(start, budget))

    @server.resource(
        CONTEXT_URI,
        name="context",
        title="Session context",
        description="The budgeted document injected at session start (as the context tool).",
        mime_type="text/markdown",
    )
    def context_resource() -> str:
        with one_at_a_time:
            try:
                return printable(context_text(start, None))
            except (BrainError, OSError) as exc:
                raise ResourceError(printable(error_line(exc))) from None

    @server.tool(annotations=read_only)
    def recall(
        query: Annotated[str, Field(description="The words to look for.")],
        limit: Annotated[
            int,
            WithJsonSchema({"type": "integer", "minimum": 1, "maximum": 100}),
            Field(description="How many matches at most (1 to 100)."),
        ] = 10,
    ) -> CallToolResult:
        """Search every store at once: brain.md entries and compaction summaries,
        brain.json's decisions, known issues, key files, facts and steps, and both memory
        logs. Answers with the best matches (BM25, the newer first on a tie), each with
        its source, kind, id or key, date and a one-line excerpt."""
        return reply(lambda: recall_data(start, query, limit))

    # -- the project state (brain.json) ---------------------------------------------------

    @server.tool(annotations=rewrites)  # replaces some fields (nextSteps, ...)
    def save(
        update: Annotated[
            dict[str, Any],
            Field(
                description="Any subset of brain.json's fields: facts {stack, architecture, "
                "environment, custom}, decisions [{what, why, when, reversible}], "
                "activeState {currentGoal, inProgress, blockers, recentlyCompleted}, "
                "keyFiles [{path, role}], knownIssues [{issue, workaround, severity}], "
                "preferences, nextSteps [...]."
            ),
        ],
    ) -> CallToolResult:
        """Merge a partial update into the project state (.voyager/brain.json) by its
        per-field rules (facts.stack grows, decisions are upserted by `what`, nextSteps
        is replaced, ...), validate it and save it. Call it before you finish. Answers
        with the changes made; a field brain.json does not define is refused, and
        nothing is saved."""
        return reply(lambda: save_state(start, update))

    # -- guard rules (seed 003) -----------------------------------------------------------

    @server.tool(annotations=adds)
    def rules_add(
        description: Annotated[
            str,
            Field(description="What the rule is for; a semantic rule matches by this text."),
        ],
        pattern: Annotated[Text, Field(description="A Python regex (makes a regex rule).")] = None,
        type: Annotated[
            Annotated[str, one_of(*guard_rules.TYPES)] | None,
            Field(description="regex (with pattern) or semantic; default from pattern."),
        ] = None,
        action: Annotated[
            str,
            one_of(*guard_rules.ACTIONS),
            Field(description="What a match does to the tool call."),
        ] = "block",
        tool: Annotated[
            Text, Field(description="Only this tool (Bash, Write, Edit, ...); default every.")
        ] = None,
        priority: Annotated[int, Field(description="Higher comes first in reasons.")] = 0,
        problem: Annotated[
            Text, Field(description="The problem the rule prevents (told to the agent).")
        ] = None,
        solution: Annotated[
            Text, Field(description="What to do instead (told to the agent).")
        ] = None,
        rule_set: Annotated[
            Text, Field(description="Add to this rule set (default: global).")
        ] = None,
    ) -> CallToolResult:
        """Add a guard rule, checked before every tool call of every agent session
        (kept in ~/.voyager/history.db): it blocks, warns about or logs matching calls.
        Answers with the rule, its id included."""
        return reply(
            lambda: add_guard_rule(
                description=description,
                pattern=pattern,
                type=type,
                action=action,
                tool=tool,
                priority=priority,
                problem=problem,
                solution=solution,
                rule_set=rule_set,
            )
        )

    @server.tool(annotations=read_only)
    def rules_test(
        tool: Annotated[str, Field(description="The tool name (Bash, Write, mcp__x__y, ...).")],
        tool_input: Annotated[
            dict[str, Any], Field(description='The tool\'s input, e.g. {"command": "ls"}.')
        ],
        project: Annotated[
            Text, Field(description="The project's folder (default: this server's).")
        ] = None,
        embedder: Annotated[
            Annotated[str, one_of("lexical", "minilm")] | None,
            Field(description="Semantic matching (default: the config's embedder)."),
        ] = None,
    ) -> CallToolResult:
        """Run the pre-tool-use guard check on a call without recording anything: the
        decision (allow, block, warn, log) and every matching rule, with the reason an
        agent would be told."""
        return reply(lambda: check_tool_call(start, tool, tool_input, project, embedder))

    return server


def serve(root: Path | None = None, *, version: str = "") -> None:
    """Serve the project `root` is in over stdio until the client closes the stream;
    every message it cannot serve is answered with its JSON-RPC error (`mcpwire`)."""
    from . import mcpwire

    mcpwire.serve(build_server(root, version=version))
