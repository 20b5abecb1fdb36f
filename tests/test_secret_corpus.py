"""The secret corpus (every row of the table, in several contexts) is redacted in full,
everywhere the brain stores text; the benign corpus comes back untouched."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, docs_generator, run_cli
from hypothesis import given
from hypothesis import strategies as st
from secret_corpus import BENIGN, SECRET_SAMPLES, Sample

from voyager_brain import redact as redact_module
from voyager_brain.redact import SECRET_PATTERNS, find_secrets, redact
from voyager_brain.secretkinds import (
    ALL_KINDS,
    CATEGORIES,
    ENTROPY_BITS,
    PROVIDER_KINDS,
    looks_random,
)
from voyager_brain.secretkinds.context import _entropy


@pytest.mark.parametrize("sample", SECRET_SAMPLES, ids=lambda s: s.id)
def test_every_kind_is_redacted_in_every_context(sample: Sample) -> None:
    out = redact(sample.text)
    assert sample.secret not in out
    assert out == sample.expected
    assert redact(out) == out and find_secrets(out) == []


@pytest.mark.parametrize("text", BENIGN.values(), ids=BENIGN.keys())
def test_benign_lines_are_left_alone(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text) == text


def test_the_table_covers_sixty_providers_in_every_category() -> None:
    assert len({kind.provider for kind in PROVIDER_KINDS}) >= 60
    assert {kind.category for kind in ALL_KINDS} == set(CATEGORIES)
    assert len(BENIGN) >= 50


def test_the_hostile_users_thirteen_are_in_the_table() -> None:
    # The kinds that reached brain.md before this table existed.
    names = {kind.name for kind in ALL_KINDS}
    assert {
        "jwt", "huggingface-token", "sendgrid-key", "twilio-api-key", "digitalocean-token",
        "shopify-token", "discord-bot-token", "telegram-bot-token", "mailgun-key",
        "azure-storage-key", "grafana-token", "linear-key", "doppler-token",
    } <= names  # fmt: skip


@pytest.mark.parametrize("kind", ALL_KINDS, ids=lambda k: f"{k.name}-{k.provider}")
def test_examples_are_obviously_fake(kind: object) -> None:
    example = kind.example  # type: ignore[attr-defined]
    assert any(mark in example for mark in ("EXAMPLE", "Example", "01234567"))


@pytest.mark.parametrize("kind", ALL_KINDS, ids=lambda k: f"{k.name}-{k.provider}")
def test_a_match_always_holds_an_anchor(kind: object) -> None:
    # Rows are skipped when the text holds none of their anchors or words: the example,
    # which matches, must hold one (or the row has none and is found by its shape). A
    # row searched everywhere (reach None) needs its words in the text, not the match.
    pattern = SECRET_PATTERNS[ALL_KINDS.index(kind)]  # type: ignore[arg-type]
    match = pattern.regex.search(kind.example)  # type: ignore[attr-defined]
    assert match is not None
    if pattern.anchors or pattern.words:
        found = match.group(0) if pattern.reach is not None else kind.example  # type: ignore[attr-defined]
        assert any(a in found for a in pattern.anchors) or any(
            w in found.lower() for w in pattern.words
        )


EXAMPLES = [kind.example for kind in ALL_KINDS]
pieces = st.lists(
    st.sampled_from([*EXAMPLES, " ", "\n", "=", ": ", '"', "_", "-", ".", "x"])
    | st.text(max_size=3),
    max_size=8,
).map("".join)


@given(pieces)
def test_every_match_holds_its_rows_anchor(text: str) -> None:
    for pattern in SECRET_PATTERNS:
        match = pattern.regex.search(text)
        if match is None:
            continue
        gated = pattern.reach is None and bool(pattern.anchors or pattern.words)
        if gated and not redact_module._may_match(pattern, redact_module._present(text)):
            continue  # searched only in a text that holds its words (the bare AWS secret)
        assert redact_module.might_hold_secret(text)
        if pattern.anchors or pattern.words:
            found = match.group(0) if not gated else text
            assert any(a in found for a in pattern.anchors) or any(
                w in found.lower() for w in pattern.words
            )


@given(pieces)
def test_redaction_of_mixed_secrets_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
    assert find_secrets(once) == []


# -- the entropy test -------------------------------------------------------------------------

RANDOM_VALUES = [
    "EXAMPLE0123456789ABCDEFGHIJ",
    "k3J9x0Qm2Lp8Zr4Tw6Yv1Nb5",
    "9f86d081884c7d659a2feaa0c55ad015",
    "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==",
]
NAME_VALUES = [
    "user-profile-settings-v2",
    "auth.login.invalid_password_message",
    "created_at_2026_03_21",
    "9b2f1c3e-4d5a-4b6c-8d7e-1f2a3b4c5d6e",
    "v1.2.3",
    "aaaaaaaaaaaaaaaa1111",
]


def test_random_values_pass_the_entropy_test_and_names_do_not() -> None:
    assert all(looks_random(v) for v in RANDOM_VALUES)
    assert not any(looks_random(v) for v in NAME_VALUES)
    assert _entropy("aaaaaaaaaaaaaaaa1111") < ENTROPY_BITS <= _entropy("9f86d081884c7d659a2f")


@pytest.mark.parametrize(
    "text",
    [
        'STRIPE_KEY = "{V}"',
        "ENCRYPTION_KEY={V}",
        'encryption_key: "{V}"',
        "signingKey: {V}",
        '{"accessKey": "{V}"}',
        "_auth={V}",
        "credentials = {V}",
    ],
)
def test_random_values_of_key_names_are_redacted_in_every_syntax(text: str) -> None:
    for value in RANDOM_VALUES[:2]:
        assert redact(text.replace("{V}", value)) == text.replace("{V}", "[REDACTED:secret]")
    for value in NAME_VALUES:
        assert redact(text.replace("{V}", value)) == text.replace("{V}", value)


# -- every store ----------------------------------------------------------------------------

CORPUS = [s.text for s in SECRET_SAMPLES if s.id.endswith(("/observation", "/json-value"))]


def test_no_secret_reaches_any_store(repo: Path, isolated_env: Path) -> None:
    """brain.md, brain.json, both memory logs and history.db, written the way agents
    write them: `add`, `save`, the memory tool, and a tool call through the hook."""
    assert run_cli("init", cwd=repo).returncode == 0
    text = "\n".join(CORPUS)
    assert run_cli("add", "observation", "-", cwd=repo, input=text).returncode == 0
    state = json.dumps({"facts": {"custom": CORPUS}})
    assert run_cli("save", "-", cwd=repo, input=state).returncode == 0
    # A learning goes to the project's log, a preference to the personal one.
    for kind in ("type=learning", "type=preference"):
        done = run_cli("brain", "action=add", kind, f"text={text}", "category=X", cwd=repo)
        assert done.returncode == 0, done.stderr
    payload = {
        "session_id": "corpus",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_use_id": "t1",
        "cwd": str(repo),
        "tool_input": {"command": "cat .env"},
        "tool_response": {"stdout": text, "stderr": "", "interrupted": False},
    }
    hook = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "claude", "post-tool-use"],
        cwd=repo,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert hook.returncode == 0, hook.stderr
    voyager = repo / ".voyager"
    stores = {
        "brain.md": (voyager / "brain.md").read_text(),
        "brain.json": (voyager / "brain.json").read_text(),
        "memory.jsonl": (voyager / "memory.jsonl").read_text(),
        "personal memory.jsonl": (isolated_env / "memory.jsonl").read_text(),
    }
    with sqlite3.connect(isolated_env / "history.db") as db:
        rows = db.execute("SELECT * FROM tool_calls").fetchall()
    stores["history.db"] = json.dumps(rows)
    for where, stored in stores.items():
        assert "[REDACTED:" in stored, where
        # Within JSON, a secret's characters may be escaped: compare both spellings.
        leaked = [
            s.id
            for s in SECRET_SAMPLES
            if s.secret in stored or json.dumps(s.secret)[1:-1] in stored
        ]
        assert leaked == [], (where, leaked)


def test_the_list_of_kinds_in_the_docs_is_current() -> None:
    module = docs_generator("make_secrets_reference")
    assert (ROOT / "docs" / "secrets.md").read_text() == module.reference(), (
        "run: python docs/make_secrets_reference.py"
    )


NAME_PIECES = ["password", "DB_PASSWORD", "token", "api_key", "signingKey", "_auth", "key",
               "credentials", "=", " = ", ": ", '"', "'", "`", "[", "]", "_", ".", "-", "\n",
               " ", "x1y2z3w4v5u6t7s8", "İ", "$X", "None", "aws_", "Bearer ", "://", "@",
               "Authorization: "]  # fmt: skip
near_misses = st.lists(
    st.sampled_from([*NAME_PIECES, *EXAMPLES]) | st.text(max_size=3), max_size=12
).map("".join)


@given(near_misses)
def test_trying_likely_starts_only_finds_what_a_full_search_finds(text: str) -> None:
    # Patterns are tried only where a match can start (a name, near an anchor): the
    # same first match as the regex searching every position.
    starts = redact_module._Starts(text, redact_module._present(text))
    for pattern in SECRET_PATTERNS:
        for pos in range(0, len(text) + 1, 7):
            full = pattern.regex.search(text, pos)
            ours = redact_module._first_match(pattern, text, pos, starts)
            assert (full and full.span()) == (ours and ours.span()), pattern


def _b64(data: bytes, pad: bool = False) -> str:
    import base64

    text = base64.urlsafe_b64encode(data).decode()
    return text if pad else text.rstrip("=")


HEADER = _b64(b'{"alg":"HS256","typ":"JWT"}')
PAYLOAD = _b64(b'{"sub":"EXAMPLE","iat":1716239022}')


@pytest.mark.parametrize(
    "token",
    [
        # JWE (direct encryption): five parts, the encrypted key empty.
        _b64(b'{"alg":"dir","enc":"A256GCM"}') + ".." + "EXAMPLEiv0123456" + "."
        + "EXAMPLEciphertext0123456789" + "." + "EXAMPLEtag012345",
        # JWE (RSA-OAEP): the second part is an encrypted key, not JSON.
        _b64(b'{"alg":"RSA-OAEP","enc":"A256GCM"}') + ".EXAMPLEkey0123456789.EXAMPLEiv0123"
        + ".EXAMPLEciphertext0123.EXAMPLEtag0123",
        # Padding left on by some libraries.
        _b64(b'{"alg":"HS256","kid":"7"}', pad=True) + "." + _b64(b'{"sub":"EXA"}', pad=True)
        + "." + "EXAMPLEsig0123456789",
        # Unsigned (`alg: none`): no signature.
        _b64(b'{"alg":"none"}') + "." + PAYLOAD + ".",
    ],
    ids=["jwe-direct", "jwe-rsa", "padded", "unsigned"],
)  # fmt: skip
def test_every_form_of_jwt_goes_whole(token: str) -> None:
    for text in (f"Set-Cookie: session={token}; HttpOnly", f"Got {token} back from the IdP"):
        assert redact(text) == text.replace(token, "[REDACTED:jwt]")
