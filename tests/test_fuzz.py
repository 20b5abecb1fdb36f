"""Every parser of a file or input a person or an agent hands us, fed random bytes and
random structured garbage: nothing escapes but the project's own errors (`BrainError`
and its kinds), which the CLI prints as one line and the hooks report and go on.

The parsers run in process on what the strategies make: brain.md, brain.json, the memory
log (read and folded), config.toml, rules.toml, the hooks' stdin and each agent's
reading of it. Garbage is drawn from fragments of each format (headings and fences,
brackets and quotes, TOML tables), nesting from one to thousands of levels deep, and
valid files with bytes inserted at random: pure random bytes rarely get past the first
check of a parser.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voyager_brain import config, nesting, tomlfile
from voyager_brain.errors import BrainError
from voyager_brain.guard import teamrules
from voyager_brain.integrations import hookio
from voyager_brain.integrations.hooks import ADAPTERS
from voyager_brain.memory import lines, log
from voyager_brain.session import brainfile
from voyager_brain.state import brainjson, positions

FUZZ = settings(max_examples=150)

# -- strategies -----------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=30),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
#: Arrays (or objects) nested 1 to 5000 levels deep: the readers recurse per level.
deep_json = st.builds(
    lambda n, opener: opener * n + {"[": "]", '{"a":': "}"}[opener] * n,
    st.integers(min_value=1, max_value=5000),
    st.sampled_from(["[", '{"a":']),
)


#: Valid JSON the readers must take or refuse in one line: integers past the 4,300 digits
#: int() converts, and escapes of lone surrogates (text that is not a character).
odd_json = st.sampled_from(["9" * 5000, "-" + "1" * 4400, '"\\ud800"', '"a\\udfff b"'])


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[bytes]) -> bytes:
    """A valid text with a few random bytes put in, or cut short, at random places."""
    data = draw(base)
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        at = draw(st.integers(min_value=0, max_value=len(data)))
        if draw(st.booleans()):
            data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
        else:
            data = data[:at]
    return data


def _state_text(fields: dict[str, Any]) -> bytes:
    state = brainjson.empty_state("fuzz", datetime(2026, 3, 21))
    state.update(fields)
    return (json.dumps(state, indent=2) + "\n").encode()


_FIELDS = list(brainjson.empty_state("fuzz", datetime(2026, 3, 21)))
brain_json_texts = st.one_of(
    st.dictionaries(st.sampled_from(_FIELDS), json_values, max_size=4).map(_state_text),
    st.builds(
        lambda key, deep: _state_text({key: "@"}).replace(b'"@"', deep.encode()),
        st.sampled_from([*_FIELDS, "extra"]),
        deep_json,
    ),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.builds(
        lambda key, odd: _state_text({key: "@"}).replace(b'"@"', odd.encode()),
        st.sampled_from([*_FIELDS, "extra"]),
        odd_json,
    ),
)

_MD_LINES = [
    "---",
    "last_compaction: '2026-03-21T15:00:00Z'",
    "key: [1, {a: b}]",
    "# Fuzz Brain — Session Context",
    "# A title of our own",
    "## Observation — 2026-03-21T14:30:00Z",
    "## Decision — not a time",
    "## Loop Status — 2026-03-21T14:35:00+02:00",
    "<!-- source: hook -->",
    "<!-- voyager-brain: closes the code fence left open above (1 line) -->",
    "```",
    "~~~~ text",
    "> ```",
    "- item",
    "\\## escaped",
    "<div>",
    "",
]
brain_md_texts = st.lists(
    st.one_of(st.sampled_from(_MD_LINES), st.text(max_size=30)), max_size=20
).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))

_TOML_FRAGMENTS = [
    "[[rules]]",
    "[pipeline]",
    "[pipeline.runners]",
    "description = ",
    "pattern = ",
    "action = ",
    "priority = ",
    "compact_budget_tokens = ",
    "summarizer = ",
    "type = 'semantic'",
    '"text"',
    "'raw'",
    '"""',
    "'''",
    "[",
    "]",
    "{",
    "}",
    ",",
    "= ",
    "# comment",
    "1",
    "-1.5",
    "true",
    "1979-05-27T07:32:00Z",
    "\n",
    "\\",
]
toml_texts = st.one_of(
    st.lists(st.one_of(st.sampled_from(_TOML_FRAGMENTS), st.text(max_size=10)), max_size=30).map(
        lambda parts: "".join(parts).encode("utf-8", "surrogatepass")
    ),
    deep_json.map(lambda deep: b"[[rules]]\ndescription = 'x'\npattern = " + deep.encode()),
)

log_texts = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"id": st.text(max_size=8), "type": st.sampled_from(log.ENTRY_TYPES)},
            optional={
                "text": json_values,
                "target_id": json_values,
                "created": st.text(max_size=25),
                "path": json_values,
                "projectPath": json_values,
            },
        ).map(json.dumps),
        json_values.map(json.dumps),
        deep_json,
        st.text(max_size=40),
    ),
    max_size=12,
).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))

_PAYLOAD_KEYS = [
    "session_id",
    "sessionId",
    "conversation_id",
    "transcript_path",
    "cwd",
    "workspace_roots",
    "hook_event_name",
    "tool_name",
    "toolName",
    "tool_input",
    "toolArgs",
    "tool_response",
    "toolResult",
    "tool_use_id",
    "duration_ms",
    "error",
    "prompt",
    "last_assistant_message",
    "command",
    "file_path",
]
payloads = st.dictionaries(
    st.one_of(st.sampled_from(_PAYLOAD_KEYS), st.text(max_size=8)),
    st.one_of(json_values, st.text(max_size=20).map(json.dumps)),
    max_size=8,
)


def any_bytes(texts: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    """Random bytes, the format's garbage, and valid-looking texts with bytes put in."""
    return st.one_of(st.binary(max_size=300), texts, mutated(texts))


def only_our_errors(call: Callable[[], object]) -> None:
    with contextlib.suppress(BrainError):  # one line for the user, by design
        call()


# -- the parsers ----------------------------------------------------------------------


@FUZZ
@given(any_bytes(brain_md_texts))
def test_brain_md(data: bytes) -> None:
    path = Path("brain.md")
    only_our_errors(lambda: brainfile.parse(data, path))
    only_our_errors(lambda: [s.content for s in brainfile.sections(data, path)[1]])


@FUZZ
@given(any_bytes(brain_json_texts))
def test_brain_json(data: bytes) -> None:
    only_our_errors(lambda: brainjson.loads(data, Path("brain.json")))
    # Where a field starts, asked for the error message: never raises at all.
    text = data.decode("utf-8", "replace")
    for field in ("facts.custom[0]", "decisions[1].what", "extra", ""):
        positions.value_line(text, field)
    nesting.deepest(text)  # asked only once a reader gave up: never raises either


@FUZZ
@given(any_bytes(log_texts))
def test_memory_log(data: bytes) -> None:
    # A bad line is counted, never raised: nothing at all escapes the log's reader.
    entries, health = log.parse(data)
    assert health.total == len(entries)
    lines.parse_objects(data)
    lines.parse_lines(data)
    only_our_errors(lambda: log.fold(entries))
    only_our_errors(lambda: log.fold_data(data, len(data), log.Folded()))


@pytest.fixture(scope="module")
def scratch() -> Any:
    # A folder of the module's own: hypothesis runs many examples in one test call.
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


@FUZZ
@given(data=any_bytes(toml_texts))
def test_config_toml(scratch: Path, data: bytes) -> None:
    path = scratch / "config.toml"
    path.write_bytes(data)
    only_our_errors(lambda: config.Config.from_mapping(tomlfile.read_toml(path), str(path)))


@FUZZ
@given(values=st.dictionaries(st.sampled_from([s.name for s in config.SETTINGS]), json_values))
def test_config_values(values: dict[str, Any]) -> None:
    only_our_errors(lambda: config.Config.from_mapping(values, "config.toml"))


@FUZZ
@given(data=any_bytes(toml_texts))
def test_rules_toml(scratch: Path, data: bytes) -> None:
    # Problems are returned, one line each: the rules loaded before still apply.
    path = scratch / "rules.toml"
    path.write_bytes(data)
    _, problems = teamrules.read_team_rules(str(path))
    assert all("\n" not in problem for problem in problems)


@FUZZ
@given(
    text=st.one_of(
        st.text(max_size=200),
        deep_json,
        payloads.map(json.dumps),
        json_values.map(json.dumps),
    )
)
def test_hook_stdin(text: str) -> None:
    only_our_errors(lambda: hookio.read_payload(io.StringIO(text)))


@pytest.mark.parametrize("agent", ADAPTERS)
@settings(max_examples=60)
@given(payload=payloads)
def test_each_agents_reading_of_its_payload(agent: str, payload: dict[str, Any]) -> None:
    module = importlib.import_module(f"voyager_brain.integrations.{agent}")
    for event in module.EVENTS:
        only_our_errors(lambda event=event: module.read(event, payload))


_PIPELINE_KEYS = ["status", "task", "pipeline", "stages", "currentStage", "retries"]
pipeline_texts = st.one_of(
    st.dictionaries(st.sampled_from(_PIPELINE_KEYS), json_values, max_size=5).map(
        lambda d: json.dumps(d).encode()
    ),
    st.builds(
        lambda key, odd: json.dumps({key: "@"}).replace('"@"', odd).encode(),
        st.sampled_from(_PIPELINE_KEYS),
        st.one_of(odd_json, deep_json),
    ),
)


@FUZZ
@given(data=any_bytes(pipeline_texts))
def test_pipeline_state(data: bytes) -> None:
    from voyager_brain.pipeline import state as ps

    path = Path(".brain/pipeline-state.json")
    only_our_errors(lambda: ps.PipelineState.from_json(ps.json_document(data, path), path))


@FUZZ
@given(lines=st.lists(any_bytes(pipeline_texts), max_size=4))
def test_pipeline_events(scratch: Path, lines: list[bytes]) -> None:
    from voyager_brain.pipeline.events import events_path, read_events

    path = events_path(scratch)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines))
    only_our_errors(lambda: read_events(scratch))
