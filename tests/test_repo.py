"""voyager_brain.repo against real git repositories made in tmp_path: finding the work tree
top, naming the project, reading the branch, and listing uncommitted brain files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import commit_all

from voyager_brain.repo import (
    brain_files_dirty,
    current_branch,
    detect_project_name,
    find_top,
)


@pytest.fixture(autouse=True)
def _quiet_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Git (ours and the module's) ignores this machine's config and has an identity."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CEILING_DIRECTORIES"):
        monkeypatch.delenv(name, raising=False)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=60
    ).stdout


def make_repo(path: Path, *, commit: bool = True) -> Path:
    """A new repository at `path` on branch main, with one commit (README.md) unless told not."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test Agent")
    git(path, "config", "user.email", "agent@example.invalid")
    git(path, "config", "commit.gpgsign", "false")
    if commit:
        (path / "README.md").write_text("# project\n", encoding="utf-8")
        git(path, "add", "README.md")
        git(path, "commit", "-q", "-m", "initial")
    return path


@pytest.fixture
def top(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "project").resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder in no repository (skips if the machine keeps tmp inside one)."""
    folder = tmp_path / "plain"
    folder.mkdir()
    probe = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True, timeout=60
    )
    if probe.returncode == 0:
        pytest.skip(f"{tmp_path} is inside a git repository")
    return folder


# -- find_top -------------------------------------------------------------------------------


def test_find_top_from_the_top(top: Path) -> None:
    assert find_top(top) == top


def test_find_top_accepts_a_string(top: Path) -> None:
    assert find_top(str(top / "README.md")) == top


def test_find_top_from_a_nested_folder(top: Path) -> None:
    nested = top / "src" / "pkg" / "deep"
    nested.mkdir(parents=True)
    assert find_top(nested) == top


def test_find_top_from_a_file(top: Path) -> None:
    assert find_top(top / "README.md") == top


def test_find_top_from_a_path_that_does_not_exist(top: Path) -> None:
    assert find_top(top / "not" / "yet" / "written.md") == top


def test_find_top_below_a_file(top: Path) -> None:
    assert find_top(top / "README.md" / "nonsense") == top


def test_find_top_outside_any_repository(outside: Path) -> None:
    assert find_top(outside) is None
    assert find_top(outside / "missing" / "file.txt") is None


def test_find_top_agrees_with_git(top: Path) -> None:
    (top / "a" / "b").mkdir(parents=True)
    for start in (top, top / "a", top / "a" / "b"):
        expected = Path(git(start, "rev-parse", "--show-toplevel").strip()).resolve()
        assert find_top(start) == expected


def test_find_top_resolves_symlinks(top: Path, tmp_path: Path) -> None:
    (top / "src").mkdir()
    link = tmp_path / "link-to-src"
    link.symlink_to(top / "src", target_is_directory=True)
    assert find_top(link) == top
    assert find_top(link / "new.py") == top


def test_find_top_returns_an_absolute_path(top: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (top / "src").mkdir()
    monkeypatch.chdir(top / "src")
    assert find_top(".") == top
    assert find_top("missing.txt") == top


def test_find_top_through_a_symlink_loop(top: Path) -> None:
    (top / "loop").symlink_to(top / "loop")
    assert find_top(top / "loop") == top
    assert find_top(top / "loop" / "file.txt") == top


def test_find_top_in_a_deleted_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert find_top("relative/file.txt") is None


def test_find_top_finds_the_innermost_repository(top: Path) -> None:
    inner = make_repo(top / "vendor" / "lib")
    assert find_top(inner / "README.md") == inner.resolve()


def test_find_top_skips_a_git_folder_that_is_not_a_repository(top: Path) -> None:
    bogus = top / "fixtures" / "case"
    (bogus / ".git").mkdir(parents=True)
    assert find_top(bogus) == top


def test_find_top_in_a_worktree(top: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(top, "worktree", "add", "-q", "-b", "wt-branch", str(worktree))
    assert (worktree / ".git").is_file()
    (worktree / "src").mkdir()
    assert find_top(worktree / "src") == worktree.resolve()
    assert find_top(worktree / "README.md") == worktree.resolve()


# -- detect_project_name --------------------------------------------------------------------


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_name_from_package_json(top: Path) -> None:
    write(top / "package.json", json.dumps({"name": "widget-js", "version": "1.0.0"}))
    assert detect_project_name(top) == "widget-js"


def test_name_from_package_json_with_a_bom(top: Path) -> None:
    (top / "package.json").write_bytes(b"\xef\xbb\xbf" + b'{"name": "bom-widget"}')
    assert detect_project_name(top) == "bom-widget"


def test_name_from_package_json_keeps_the_scope(top: Path) -> None:
    write(top / "package.json", '{"name": "@acme/widget"}')
    assert detect_project_name(top) == "@acme/widget"


def test_name_is_stripped(top: Path) -> None:
    write(top / "package.json", '{"name": "  padded \\n"}')
    assert detect_project_name(top) == "padded"


def test_name_from_pyproject_project_table(top: Path) -> None:
    write(top / "pyproject.toml", '[project]\nname = "widget-py"\nversion = "1.0"\n')
    assert detect_project_name(top) == "widget-py"


def test_name_from_pyproject_poetry_table(top: Path) -> None:
    write(top / "pyproject.toml", '[tool.poetry]\nname = "widget-poetry"\n')
    assert detect_project_name(top) == "widget-poetry"


def test_pyproject_project_table_beats_poetry(top: Path) -> None:
    write(top / "pyproject.toml", '[project]\nname = "pep621"\n\n[tool.poetry]\nname = "poetry"\n')
    assert detect_project_name(top) == "pep621"


def test_name_from_cargo_toml(top: Path) -> None:
    write(top / "Cargo.toml", '[package]\nname = "widget-rs"\nedition = "2021"\n')
    assert detect_project_name(top) == "widget-rs"


@pytest.mark.parametrize(
    ("go_mod", "expected"),
    [
        ("module github.com/acme/widget\n\ngo 1.22\n", "widget"),
        ("module github.com/acme/widget/v2\n\ngo 1.22\n", "widget"),
        ("module github.com/acme/widget/v12 // major 12\n", "widget"),
        ('// the widget\nmodule "example.com/quoted"\n', "quoted"),
        ("module (\n\texample.com/in/block\n)\n", "block"),
        ("module gopkg.in/yaml.v3\n", "yaml"),
        ("module widget\n", "widget"),
    ],
)
def test_name_from_go_mod(top: Path, go_mod: str, expected: str) -> None:
    write(top / "go.mod", go_mod)
    assert detect_project_name(top) == expected


def test_package_json_wins_over_every_other_source(top: Path) -> None:
    write(top / "package.json", '{"name": "from-npm"}')
    write(top / "pyproject.toml", '[project]\nname = "from-python"\n')
    write(top / "Cargo.toml", '[package]\nname = "from-rust"\n')
    write(top / "go.mod", "module example.com/from-go\n")
    git(top, "remote", "add", "origin", "https://example.com/acme/from-remote.git")
    assert detect_project_name(top) == "from-npm"


def test_manifest_order_after_package_json(top: Path) -> None:
    write(top / "Cargo.toml", '[package]\nname = "from-rust"\n')
    write(top / "go.mod", "module example.com/from-go\n")
    assert detect_project_name(top) == "from-rust"
    write(top / "pyproject.toml", '[project]\nname = "from-python"\n')
    assert detect_project_name(top) == "from-python"


@pytest.mark.parametrize(
    "package_json",
    [
        "{not json",
        "",
        '["name", "array"]',
        '{"version": "1.0.0"}',
        '{"name": ""}',
        '{"name": "   "}',
        '{"name": 42}',
        '{"name": null}',
    ],
)
def test_unusable_package_json_falls_through(top: Path, package_json: str) -> None:
    write(top / "package.json", package_json)
    write(top / "pyproject.toml", '[project]\nname = "from-python"\n')
    assert detect_project_name(top) == "from-python"


def test_package_json_that_is_not_utf8_falls_through(top: Path) -> None:
    (top / "package.json").write_bytes(b'{"name": "caf\xe9"}')
    write(top / "Cargo.toml", '[package]\nname = "from-rust"\n')
    assert detect_project_name(top) == "from-rust"


def test_package_json_that_is_a_folder_falls_through(top: Path) -> None:
    (top / "package.json").mkdir()
    write(top / "Cargo.toml", '[package]\nname = "from-rust"\n')
    assert detect_project_name(top) == "from-rust"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_unreadable_package_json_falls_through(top: Path) -> None:
    write(top / "package.json", '{"name": "secret"}')
    (top / "package.json").chmod(0)
    write(top / "Cargo.toml", '[package]\nname = "from-rust"\n')
    assert detect_project_name(top) == "from-rust"


@pytest.mark.parametrize(
    "pyproject",
    [
        "[project\nname = 'broken'",
        '[project]\nversion = "1.0"\n',
        'project = "not a table"\n',
        '[project]\nname = ["a", "list"]\n',
        '[tool]\npoetry = "not a table"\n',
    ],
)
def test_unusable_pyproject_falls_through(top: Path, pyproject: str) -> None:
    write(top / "pyproject.toml", pyproject)
    write(top / "Cargo.toml", '[package]\nname = "from-rust"\n')
    assert detect_project_name(top) == "from-rust"


def test_broken_cargo_and_go_mod_fall_through_to_the_remote(top: Path) -> None:
    write(top / "Cargo.toml", "[package\n")
    write(top / "go.mod", "go 1.22\n")
    git(top, "remote", "add", "origin", "git@github.com:acme/from-remote.git")
    assert detect_project_name(top) == "from-remote"


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/acme/widget.git",
        "https://github.com/acme/widget",
        "https://github.com/acme/widget/",
        "https://github.com/acme/widget.git/",
        "https://user@gitlab.example.com/group/sub/widget.git",
        "git@github.com:acme/widget.git",
        "git@github.com:acme/widget",
        "github.com:widget.git",
        "ssh://git@github.com/acme/widget.git",
        "ssh://git@github.com:2222/acme/widget",
        "git://example.com/widget.git",
        "file:///srv/git/widget.git",
        "/srv/git/widget.git",
        "/srv/git/widget/",
        "/home/me/src/widget/.git",
        "../widget",
    ],
)
def test_name_from_the_remote_url(top: Path, url: str) -> None:
    git(top, "remote", "add", "origin", url)
    assert detect_project_name(top) == "widget"


def test_origin_is_preferred_over_other_remotes(top: Path) -> None:
    git(top, "remote", "add", "upstream", "https://example.com/acme/upstream-name.git")
    git(top, "remote", "add", "origin", "https://example.com/me/origin-name.git")
    assert detect_project_name(top) == "origin-name"


def test_first_remote_when_there_is_no_origin(top: Path) -> None:
    git(top, "remote", "add", "upstream", "https://example.com/acme/first.git")
    git(top, "remote", "add", "fork", "https://example.com/me/second.git")
    assert detect_project_name(top) == "first"


def test_remote_name_with_dots(top: Path) -> None:
    git(top, "remote", "add", "my.fork", "https://example.com/me/dotted.git")
    assert detect_project_name(top) == "dotted"


def test_name_from_the_remote_in_a_worktree(top: Path, tmp_path: Path) -> None:
    git(top, "remote", "add", "origin", "https://example.com/acme/shared.git")
    worktree = tmp_path / "checkout-2"
    git(top, "worktree", "add", "-q", "-b", "other", str(worktree))
    assert detect_project_name(worktree.resolve()) == "shared"


def test_folder_name_when_nothing_else_names_the_project(tmp_path: Path) -> None:
    top = make_repo(tmp_path / "my-folder").resolve()
    assert detect_project_name(top) == "my-folder"


def test_folder_name_outside_a_repository(outside: Path) -> None:
    assert detect_project_name(outside) == "plain"


def test_folder_name_for_a_relative_top(top: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(top)
    assert detect_project_name(Path(".")) == "project"


# -- current_branch -------------------------------------------------------------------------


def test_branch_main(top: Path) -> None:
    assert current_branch(top) == "main"


def test_branch_before_the_first_commit(tmp_path: Path) -> None:
    top = make_repo(tmp_path / "fresh", commit=False)
    assert current_branch(top) == "main"


def test_branch_with_a_slash(top: Path) -> None:
    git(top, "checkout", "-q", "-b", "feature/x")
    assert current_branch(top) == "feature/x"


def test_branch_detached_head(top: Path) -> None:
    git(top, "checkout", "-q", "--detach")
    assert current_branch(top) is None


def test_branch_detached_at_a_tag(top: Path) -> None:
    git(top, "tag", "v1")
    git(top, "checkout", "-q", "v1")
    assert current_branch(top) is None


def test_branch_in_a_worktree(top: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(top, "worktree", "add", "-q", "-b", "feature/wt", str(worktree))
    assert current_branch(worktree) == "feature/wt"
    assert current_branch(top) == "main"  # each work tree has its own HEAD


def test_branch_through_a_relative_gitdir_file(top: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(top, "worktree", "add", "-q", "-b", "relative", str(worktree))
    absolute = (worktree / ".git").read_text(encoding="utf-8").split(":", 1)[1].strip()
    relative = os.path.relpath(absolute, worktree)
    (worktree / ".git").write_text(f"gitdir: {relative}\n", encoding="utf-8")
    assert current_branch(worktree) == "relative"
    assert git(worktree, "rev-parse", "--abbrev-ref", "HEAD").strip() == "relative"


def test_branch_from_a_folder_inside_the_work_tree(top: Path) -> None:
    (top / "src").mkdir()
    assert current_branch(top / "src") == "main"


def test_branch_outside_a_repository(outside: Path) -> None:
    assert current_branch(outside) is None


def test_branch_of_a_missing_folder(tmp_path: Path) -> None:
    assert current_branch(tmp_path / "nowhere") is None


# -- brain_files_dirty ----------------------------------------------------------------------


@pytest.fixture
def brain_top(top: Path) -> Path:
    """`top` with a committed .voyager/ (brain.md, config.toml)."""
    write(top / ".voyager" / "brain.md", "# project Brain — Session Context\n")
    write(top / ".voyager" / "config.toml", "# settings\n")
    commit_all(top, "add brain")
    return top


def test_dirty_clean_repository(brain_top: Path) -> None:
    assert brain_files_dirty(brain_top) == []


def test_dirty_no_voyager_folder_yet(top: Path) -> None:
    assert brain_files_dirty(top) == []


def test_dirty_untracked_brain(top: Path) -> None:
    write(top / ".voyager" / "brain.md", "# new\n")
    assert brain_files_dirty(top) == [".voyager/brain.md"]


def test_dirty_untracked_files_are_listed_one_by_one(top: Path) -> None:
    write(top / ".voyager" / "brain.md", "# new\n")
    write(top / ".voyager" / "templates" / "observation.md.j2", "{{ content }}\n")
    assert brain_files_dirty(top) == [
        ".voyager/brain.md",
        ".voyager/templates/observation.md.j2",
    ]


def test_dirty_modified_tracked_file(brain_top: Path) -> None:
    write(brain_top / ".voyager" / "brain.md", "# changed\n")
    assert brain_files_dirty(brain_top) == [".voyager/brain.md"]


def test_dirty_staged_and_deleted_files(brain_top: Path) -> None:
    write(brain_top / ".voyager" / "brain.md", "# staged\n")
    git(brain_top, "add", ".voyager/brain.md")
    (brain_top / ".voyager" / "config.toml").unlink()
    assert brain_files_dirty(brain_top) == [".voyager/brain.md", ".voyager/config.toml"]


def test_dirty_rename_lists_both_names(brain_top: Path) -> None:
    git(brain_top, "mv", ".voyager/brain.md", ".voyager/old-brain.md")
    assert brain_files_dirty(brain_top) == [".voyager/brain.md", ".voyager/old-brain.md"]


def test_dirty_ignores_files_outside_voyager(brain_top: Path) -> None:
    write(brain_top / "README.md", "# changed\n")
    write(brain_top / "notes.txt", "untracked\n")
    write(brain_top / "docs" / ".voyager-like.md", "untracked\n")
    assert brain_files_dirty(brain_top) == []
    write(brain_top / ".voyager" / "brain.md", "# changed\n")
    assert brain_files_dirty(brain_top) == [".voyager/brain.md"]


def test_dirty_ignored_files_are_not_listed(brain_top: Path) -> None:
    write(brain_top / ".voyager" / ".gitignore", "*.lock\n")
    commit_all(brain_top, "ignore locks")
    write(brain_top / ".voyager" / "brain.md.lock", "")
    assert brain_files_dirty(brain_top) == []


def test_dirty_names_are_not_quoted(brain_top: Path) -> None:
    write(brain_top / ".voyager" / "notes café.md", "x\n")
    write(brain_top / ".voyager" / 'odd "quoted" name.md', "x\n")
    assert brain_files_dirty(brain_top) == [
        ".voyager/notes café.md",
        '.voyager/odd "quoted" name.md',
    ]


def test_dirty_paths_are_relative_to_the_top_and_literal(brain_top: Path) -> None:
    write(brain_top / "docs" / "a.md", "x\n")
    write(brain_top / "docs" / "b*.md", "x\n")
    assert brain_files_dirty(brain_top, ["docs/b*.md"]) == ["docs/b*.md"]
    assert brain_files_dirty(brain_top, ["docs", ".voyager"]) == ["docs/a.md", "docs/b*.md"]


def test_dirty_with_no_paths(brain_top: Path) -> None:
    write(brain_top / "notes.txt", "untracked\n")
    assert brain_files_dirty(brain_top, ()) == []


def test_dirty_in_a_worktree(brain_top: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    git(brain_top, "worktree", "add", "-q", "-b", "wt", str(worktree))
    assert brain_files_dirty(worktree) == []
    write(worktree / ".voyager" / "brain.md", "# changed in the worktree\n")
    assert brain_files_dirty(worktree) == [".voyager/brain.md"]
    assert brain_files_dirty(brain_top) == []


def test_dirty_ignores_a_hook_s_git_dir(
    brain_top: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_repo(tmp_path / "other")
    write(other / ".voyager" / "brain.md", "# other repository\n")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert brain_files_dirty(brain_top) == []


def test_dirty_outside_a_repository(outside: Path) -> None:
    write(outside / ".voyager" / "brain.md", "# not in git\n")
    assert brain_files_dirty(outside) == []


def test_dirty_missing_folder(tmp_path: Path) -> None:
    assert brain_files_dirty(tmp_path / "nowhere") == []


def test_dirty_without_git(brain_top: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(brain_top / ".voyager" / "brain.md", "# changed\n")
    monkeypatch.setenv("PATH", str(brain_top / "no-bin-here"))
    assert brain_files_dirty(brain_top) == []


# -- read_blobs, operation_in_progress -----------------------------------------------------


def test_read_blobs_reads_revisions_and_the_index_in_one_go(tmp_path: Path) -> None:
    from voyager_brain.repo import read_blobs

    top = make_repo(tmp_path / "blobs")
    (top / "a.txt").write_bytes(b"one\n")
    git(top, "add", "a.txt")
    git(top, "commit", "-q", "-m", "a")
    (top / "a.txt").write_bytes(b"two\x00binary\n")
    git(top, "add", "a.txt")
    assert read_blobs(top, ["HEAD:a.txt", ":a.txt", "HEAD:missing.txt", "HEAD", "HEAD:a.txt"]) == [
        b"one\n",
        b"two\x00binary\n",
        None,
        None,  # a commit, not a blob
        b"one\n",
    ]
    assert read_blobs(top, []) == []


def test_operation_in_progress_reads_the_git_directory(tmp_path: Path) -> None:
    from voyager_brain.repo import operation_in_progress

    top = make_repo(tmp_path / "busy")
    assert operation_in_progress(top) is None
    (top / ".git" / "CHERRY_PICK_HEAD").write_text("0" * 40 + "\n")
    assert operation_in_progress(top) == "a cherry-pick"
    assert operation_in_progress(tmp_path / "not-a-repo") is None


def test_a_detected_name_is_remembered_until_a_file_it_read_changes(
    top: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent loop builds the context again and again: the name found through git is
    not asked of git again (here git is off the PATH for the second call), until the
    git config or a manifest changes."""
    git(top, "remote", "add", "origin", "https://example.com/acme/first.git")
    assert detect_project_name(top) == "first"
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", "")
    assert detect_project_name(top) == "first"
    monkeypatch.setenv("PATH", path)
    git(top, "remote", "set-url", "origin", "https://example.com/acme/second.git")
    assert detect_project_name(top) == "second"
    (top / "package.json").write_text('{"name": "from-manifest"}')
    assert detect_project_name(top) == "from-manifest"
