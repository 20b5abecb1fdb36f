"""config.toml: defaults from the seeds, personal then project files, clear errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from conftest import ROOT, docs_generator, trusted
from hypothesis import given, settings
from hypothesis import strategies as st

from voyager_brain import Config, ConfigError
from voyager_brain.config import (
    PIPELINE_SETTINGS,
    SETTINGS,
    PipelineConfig,
    default_config_toml,
    load_config,
)
from voyager_brain.tomlfile import read_simple_toml, read_toml


def test_defaults() -> None:
    config = Config()
    assert (config.compact_budget_tokens, config.chars_per_token) == (4000, 4)
    assert config.auto_compact and config.redact_secrets
    assert config.compact_budget_chars == 16000


def test_project_overrides_personal_key_by_key(tmp_path: Path, isolated_env: Path) -> None:
    (isolated_env / "config.toml").write_text(
        "compact_budget_tokens = 1000\nauto_compact = false\n"
    )
    project = tmp_path / ".voyager"
    project.mkdir()
    (project / "config.toml").write_text("compact_budget_tokens = 2000\n")
    config = load_config(project)
    assert (config.compact_budget_tokens, config.auto_compact) == (2000, False)


def test_missing_files_give_defaults(tmp_path: Path) -> None:
    assert load_config(tmp_path / "nowhere") == Config()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("compact_budget_tokens = 'big'", "compact_budget_tokens: expected int, got str 'big'"),
        ("auto_compact = 1", "auto_compact: expected bool, got int 1"),
        ("compact_budget_tokens = true", "compact_budget_tokens: expected int, got bool True"),
        ("compact_budget_tokens = -5", "compact_budget_tokens: expected a positive number"),
        ("summarizer = 'gpt'", "summarizer: expected one of extractive, model, got 'gpt'"),
        ("compact_budget_tokens = ", "not valid TOML"),
    ],
)
def test_bad_values_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "config.toml").write_text(text + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value).startswith(str(tmp_path / "config.toml"))
    assert message in str(info.value)


def test_unknown_keys_are_kept_as_warnings(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("future_key = 1\n")
    assert load_config(tmp_path).unknown_keys == (f"{tmp_path / 'config.toml'}: future_key",)


def test_float_setting_accepts_an_integer() -> None:
    assert Config.from_mapping({"lock_timeout_seconds": 3}).lock_timeout_seconds == 3.0


def test_init_config_documents_every_key_and_parses_to_defaults() -> None:
    text = default_config_toml()
    for setting in SETTINGS:
        assert f"# {setting.name} = " in text
    assert tomllib.loads(text) == {}
    for setting in PIPELINE_SETTINGS:
        assert f"# {setting.name} = " in text
    uncommented = "\n".join(
        line[2:]
        for line in text.splitlines()
        if line.startswith("# ") and (" = " in line or line == "# [pipeline]")
    )
    assert "[pipeline]" in uncommented
    assert Config.from_mapping(tomllib.loads(uncommented)) == Config()


def test_configuration_reference_is_up_to_date() -> None:
    module = docs_generator("make_config_reference")
    doc = (ROOT / "docs" / "configuration.md").read_text()
    assert doc == module.reference(), "run: python docs/make_config_reference.py"
    for setting in SETTINGS:
        assert f"| `{setting.name}` |" in doc


def test_camel_case_spellings_of_the_memory_settings_are_accepted() -> None:
    config = Config.from_mapping({"decayAfterDays": 30, "promptBudget": 1000, "autoMemory": False})
    assert (config.decay_after_days, config.prompt_budget, config.auto_memory) == (30, 1000, False)
    assert Config.from_mapping({"decay_min_score": 0}).decay_min_score == 0


def test_pipeline_table_defaults_and_overrides(isolated_env: Path, tmp_path: Path) -> None:
    assert Config().pipeline == PipelineConfig()
    assert Config().pipeline.stages == ("architect", "builder", "reviewer")
    assert (Config().pipeline.max_retries, Config().pipeline.idle_seconds) == (2, 300.0)
    (isolated_env / "config.toml").write_text(
        '[pipeline]\nrunner = "home-agent"\nmax_retries = 5\n'
        '[pipeline.runners]\nreviewer = "home-reviewer"\n'
    )
    project = tmp_path / ".voyager"
    project.mkdir()
    (project / "config.toml").write_text(
        'prompt_budget = 900\n[pipeline]\nstages = ["builder", "reviewer"]\nmax_retries = 0\n'
        '[pipeline.runners]\nbuilder = "project-builder"\n'
    )
    config = load_config(project)
    # Untrusted, the project's runner is ignored (named), its other keys apply.
    assert config.pipeline.runner_for("builder") == "home-agent"
    assert config.ignored_keys == (f"{project / 'config.toml'}: pipeline.runners.builder",)
    assert config.pipeline.max_retries == 0
    trusted(tmp_path)
    config = load_config(project)
    assert config.prompt_budget == 900 and config.ignored_keys == ()
    pipeline = config.pipeline
    assert pipeline.stages == ("builder", "reviewer")
    assert pipeline.max_retries == 0  # the project's file wins key by key
    assert pipeline.runner_for("builder") == "project-builder"
    assert pipeline.runner_for("reviewer") == "home-reviewer"  # kept from the personal file
    assert pipeline.runner_for("architect") == "home-agent"
    assert config.unknown_keys == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[pipeline]\nmax_retries = -1\n", "pipeline: max_retries: expected a number >= 0"),
        ('[pipeline]\nmax_retries = "2"\n', "pipeline: max_retries: expected int"),
        ("[pipeline]\nstages = 3\n", "pipeline.stages: expected a comma-separated string"),
        ('[pipeline.runners]\nwizard = "x"\n', "pipeline.runners.wizard: unknown role"),
        ("[pipeline.runners]\nbuilder = 1\n", "pipeline.runners.builder: expected a command"),
        ("[pipeline]\nidle_seconds = 0\n", "pipeline: idle_seconds: expected a positive number"),
    ],
)
def test_bad_pipeline_values_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "config.toml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value).startswith(str(tmp_path / "config.toml"))
    assert message in str(info.value)


def test_unknown_pipeline_key_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[pipeline]\nfuture = 1\n")
    assert load_config(tmp_path).unknown_keys == (f"{tmp_path / 'config.toml'}: pipeline.future",)


def test_comma_separated_stages_are_trimmed() -> None:
    config = Config.from_mapping({"pipeline": {"stages": " scout , builder,reviewer "}})
    assert config.pipeline.stages == ("scout", "builder", "reviewer")


# -- the TOML subset read without tomllib ---------------------------------------------

_keys = st.sampled_from(["a", "prompt_budget", "A-b_9", "1", "true", "a.b", '"q"', "é", ""])
_values = st.one_of(
    st.sampled_from(
        [
            *("true", "false", "True", "0", "-0", "+7", "01", "1_000", "12", "1.5", "1."),
            *(".5", "-0.0", "1e3", "inf", "nan", '""', "''", '"x # y"', "'c:\\p'", '"a\\"b"'),
            *('"\\n"', '"tab\there"', "'it''s'", '"""x"""', "[1]", "{a = 1}", "x"),
            *("9" * 5000, "-" + "9" * 4301, "9" * 19, "9" * 20, "1." + "0" * 30),
        ]
    ),
    st.text(max_size=6).map(lambda t: f'"{t}"'),
    st.text(max_size=6).map(lambda t: f"'{t}'"),
)
_line = st.one_of(
    st.builds(
        lambda indent, k, eq, v, tail: f"{indent}{k}{eq}{v}{tail}",
        st.sampled_from(["", " ", "\t"]),
        _keys,
        st.sampled_from([" = ", "=", " =\t", " : "]),
        _values,
        st.sampled_from(["", " ", " # note", "# x\x01", "\r"]),
    ),
    st.sampled_from(["", " ", "# comment", "  # x = 1", "#\x7f", "[table]", "\r", "\ufeff"]),
    st.text(max_size=8),
)


@settings(max_examples=600)
@given(st.lists(_line, max_size=6), st.sampled_from(["\n", "\r\n"]))
def test_the_simple_reader_agrees_with_tomllib(lines: list[str], newline: str) -> None:
    """Where the reader answers, it answers what tomllib does (and tomllib accepts the
    text); where tomllib refuses a text, the reader leaves it to tomllib."""
    text = newline.join(lines)
    try:
        expected = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):  # ValueError: past 4,300 digits
        assert read_simple_toml(text) is None
        return
    got = read_simple_toml(text)
    if got is not None:
        assert got == expected and [type(v) for v in got.values()] == [
            type(v) for v in expected.values()
        ]


@pytest.mark.parametrize("table", ["", "[memory]\n"], ids=["simple", "tomllib"])
def test_an_integer_past_what_python_converts_is_one_line(tmp_path: Path, table: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"# budget\n{table}prompt_budget = {'9' * 5000}\n")
    with pytest.raises(ConfigError) as raised:
        read_toml(path)
    line = 3 if table else 2
    assert str(raised.value) == (
        f"{path}:{line}: an integer of 5,000 digits; at most 4,300 can be read"
    )


def test_what_init_writes_and_a_changed_value_need_no_tomllib() -> None:
    written = default_config_toml()
    assert read_simple_toml(written) == {}
    edited = written.replace("# prompt_budget = 2000", "prompt_budget = 3000  # more room")
    assert read_simple_toml(edited) == {"prompt_budget": 3000} == tomllib.loads(edited)
    assert read_simple_toml("[memory]\nprompt_budget = 3000\n") is None  # tomllib reads it
