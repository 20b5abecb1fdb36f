"""redact: secrets never reach a git-tracked file, and ordinary notes come back untouched.

Every fake secret is assembled at run time (prefix + seeded random body), so this file
holds nothing that a secret scanner would flag, yet each value has the documented
prefix, length and alphabet of the real thing.
"""

from __future__ import annotations

import base64
import json
import random
import string
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from voyager_brain import redact as redact_module
from voyager_brain.redact import SECRET_PATTERNS, SecretPattern, find_secrets, redact

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
B64URL = ALNUM + "_-"
HEX = "0123456789abcdef"


def fake(prefix: str, length: int, alphabet: str = ALNUM) -> str:
    """`prefix` + a random-looking body (the same on every run)."""
    rng = random.Random(f"{prefix}/{length}/{alphabet}")
    body = "".join(rng.choice(alphabet) for _ in range(length))
    if not any(c.isdigit() for c in body) and any(c.isdigit() for c in alphabet):
        body = body[:-1] + "7"  # real keys of this length always have a digit somewhere
    return prefix + body


def b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def pem(kind: str, body_lines: int = 3) -> str:
    label = f"{kind} PRIVATE KEY".strip()
    body = "\n".join(fake(f"MII{i}", 61, ALNUM + "+/") for i in range(body_lines))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


# -- the fake secrets ---------------------------------------------------------------------

AWS_KEY_ID = fake("AKIA", 16, UPPER_ALNUM)
AWS_TEMP_KEY_ID = fake("ASIA", 16, UPPER_ALNUM)
AWS_SECRET = fake("", 40, ALNUM + "/+")
GITHUB_CLASSIC = fake("ghp_", 36)
GITHUB_OAUTH = fake("gho_", 36)
GITHUB_USER_TO_SERVER = fake("ghu_", 36)
GITHUB_APP = fake("ghs_", 36)
GITHUB_REFRESH = fake("ghr_", 36)
GITHUB_FINE_GRAINED = fake("github_pat_11", 20) + fake("_", 59)
GITLAB_PAT = fake("glpat-", 20, B64URL)
GITLAB_DEPLOY = fake("gldt-", 20, B64URL)
GITLAB_RUNNER = fake("glrt-", 20, B64URL)
GITLAB_TRIGGER = fake("glptt-", 40, HEX)
SLACK_BOT = fake("xoxb-", 12, string.digits) + fake("-", 13, string.digits) + fake("-", 24)
SLACK_USER = fake("xoxp-", 12, string.digits) + fake("-", 12, string.digits) + fake("-", 32, HEX)
SLACK_APP = fake("xapp-1-A", 10, UPPER_ALNUM) + fake("-", 13, string.digits) + fake("-", 64, HEX)
SLACK_HOOK_PATH = fake("T", 8, UPPER_ALNUM) + fake("/B", 10, UPPER_ALNUM) + fake("/", 24)
STRIPE_LIVE = fake("sk_live_", 24)
STRIPE_TEST = fake("sk_test_", 99)
STRIPE_RESTRICTED = fake("rk_live_", 24)
STRIPE_PUBLISHABLE = fake("pk_live_", 24)
STRIPE_WEBHOOK = fake("whsec_", 32)
OPENAI_LEGACY = fake("sk-", 48)
OPENAI_PROJECT = fake("sk-proj-", 156, B64URL)
OPENAI_SERVICE = fake("sk-svcacct-", 120, B64URL)
ANTHROPIC = fake("sk-ant-api03-", 93, B64URL) + "AA"
ANTHROPIC_ADMIN = fake("sk-ant-admin01-", 93, B64URL) + "AA"
GOOGLE = fake("AIza", 35, B64URL)
JWT = ".".join(
    (
        b64url({"alg": "HS256", "typ": "JWT"}),
        b64url({"sub": "1234567890", "name": "Ada", "iat": 1716239022}),
        fake("", 43, B64URL),
    )
)
NPM = fake("npm_", 36)
PYPI = fake("pypi-AgEIcHlwaS5vcmc", 120, B64URL)
# Symbols inside, as password rules demand; no `&`, which would end a shell word.
PASSWORD = fake("", 8, ALNUM) + fake("", 3, "!#%^*") + fake("", 3, string.digits)
BASIC_CREDENTIALS = base64.b64encode(b"deploy:" + PASSWORD.encode()).decode()
OPAQUE_TOKEN = fake("", 32, HEX)
DJANGO_SECRET_KEY = "django-insecure-" + fake(
    "", 50, string.ascii_lowercase + "0123456789!@#%^*-_="
)


# Grouped by the name each secret must be redacted as. Kept out of the formatter, which
# would spread every wrapped scenario over five lines.
# fmt: off
SCENARIOS: dict[str, list[tuple[str, str, str]]] = {
    "aws-access-key": [
        ("key-id-in-ini", "[default]\naws_access_key_id = {S}\n", AWS_KEY_ID),
        ("sts-key-id-in-log", "INFO assumed role, key={S} expires=3600", AWS_TEMP_KEY_ID),
    ],
    "aws-secret-key": [
        ("in-ini", "aws_secret_access_key = {S}\nregion = eu-west-1", AWS_SECRET),
        ("in-env", "export AWS_SECRET_ACCESS_KEY={S}", AWS_SECRET),
        ("in-sts-json", '{"AccessKeyId": "x", "SecretAccessKey": "{S}"}', AWS_SECRET),
    ],
    "github-token": [
        ("classic-in-shell", "export GITHUB_TOKEN={S}", GITHUB_CLASSIC),
        ("oauth-in-log", "2026-03-21 14:30:00 auth ok token={S} scopes=repo", GITHUB_OAUTH),
        ("user-to-server-in-prose", "The app got {S} back from the callback.",
         GITHUB_USER_TO_SERVER),
        ("app-in-clone-url", "git clone https://x-access-token:{S}@github.com/org/r.git",
         GITHUB_APP),
        ("refresh-in-json", '{"refresh_token": "{S}", "expires_in": 15811200}', GITHUB_REFRESH),
        ("fine-grained-in-curl",
         'curl -H "Authorization: token {S}" https://api.github.com/user', GITHUB_FINE_GRAINED),
    ],
    "gitlab-token": [
        ("pat-in-yaml", "gitlab:\n  token: {S}\n", GITLAB_PAT),
        ("deploy-token-in-prose", "Deploy token {S} was created for the registry.",
         GITLAB_DEPLOY),
        ("runner-token-in-toml", '[[runners]]\n  token = "{S}"', GITLAB_RUNNER),
        ("trigger-in-curl", "curl -X POST -F token={S} -F ref=main https://gitlab.com/api/v4",
         GITLAB_TRIGGER),
    ],
    "slack-token": [
        ("bot-in-env", "SLACK_BOT_TOKEN={S}", SLACK_BOT),
        ("user-in-python", 'client = WebClient(token="{S}")', SLACK_USER),
        ("app-in-log", "socket mode connecting with {S}", SLACK_APP),
    ],
    "slack-webhook": [
        ("in-curl", "curl -d '{\"text\":\"deployed\"}' https://hooks.slack.com/services/{S}",
         SLACK_HOOK_PATH),
    ],
    "stripe-key": [
        ("live-in-python", 'stripe.api_key = "{S}"', STRIPE_LIVE),
        ("test-in-curl", "curl https://api.stripe.com/v1/charges -u {S}:", STRIPE_TEST),
        ("restricted-in-env", "STRIPE_KEY={S}", STRIPE_RESTRICTED),
        ("publishable-in-js", "const stripe = Stripe('{S}');", STRIPE_PUBLISHABLE),
        ("webhook-secret-in-yaml", "stripe:\n  webhook_secret: {S}", STRIPE_WEBHOOK),
    ],
    "openai-key": [
        ("legacy-in-env", "OPENAI_API_KEY={S}", OPENAI_LEGACY),
        ("project-in-python", 'client = OpenAI(api_key="{S}")', OPENAI_PROJECT),
        ("service-account-in-prose", "Rotated the CI key; the old one was {S}.", OPENAI_SERVICE),
    ],
    "anthropic-key": [
        ("in-env", "ANTHROPIC_API_KEY={S}", ANTHROPIC),
        ("in-curl", 'curl https://api.anthropic.com/v1/messages -H "x-api-key: {S}"', ANTHROPIC),
        ("admin-in-json", '{"key": "{S}"}', ANTHROPIC_ADMIN),
    ],
    "google-api-key": [
        ("in-url", "GET https://maps.googleapis.com/maps/api/geocode/json?key={S}", GOOGLE),
    ],
    "jwt": [
        ("in-bearer-header", 'curl -H "Authorization: Bearer {S}" https://api.example.com', JWT),
        ("in-cookie-log", "Set-Cookie: session={S}; HttpOnly; Path=/", JWT),
    ],
    "private-key": [
        ("rsa", "key file:\n{S}\nend of file", pem("RSA")),
        ("openssh", "$ cat ~/.ssh/id_ed25519\n{S}\n$ ", pem("OPENSSH")),
        ("ec", "{S}", pem("EC", 2)),
        ("dsa", "old host key:\n{S}", pem("DSA")),
        ("encrypted", "Encrypted:\n{S}\n", pem("ENCRYPTED")),
        ("pkcs8-in-json-string",
         '{"type": "service_account", "private_key": "{S}\\n", "client_id": "1"}',
         pem("").replace("\n", "\\n")),
        ("unterminated", "pasted half a key:\n{S}", pem("RSA").rsplit("\n", 1)[0]),
    ],
    "url-password": [
        ("postgres", "DATABASE_URL=postgres://app:{S}@db.internal:5432/app", PASSWORD),
        ("redis-without-user", 'REDIS_URL = "redis://:{S}@cache:6379/0"', PASSWORD),
        ("mongodb-srv", "connect mongodb+srv://admin:{S}@cluster0.example.net/test", PASSWORD),
    ],
    "password": [
        ("in-python-call", 'db = connect(host="db", password="{S}")', PASSWORD),
        ("with-annotation", 'password: str = "{S}"', PASSWORD),
        ("in-json", '{"username": "admin", "password": "{S}"}', PASSWORD),
        ("in-yaml", "database:\n  user: app\n  password: {S}\n", PASSWORD),
        ("prefixed-in-env", "DB_PASSWORD={S}\nDB_HOST=localhost", PASSWORD),
        ("in-docker-run", "docker run -e POSTGRES_PASSWORD={S} postgres:16", PASSWORD),
        ("pgpassword-in-shell", "PGPASSWORD={S} psql -h db -U app", PASSWORD),
        ("cli-flag", "mysqldump --user=root --password={S} app > dump.sql", PASSWORD),
        ("passwd-in-go", 'passwd := "{S}"', PASSWORD),
        ("in-ruby-hash", "{ 'password' => '{S}' }", PASSWORD),
        ("in-environ-subscript", 'os.environ["DB_PASSWORD"] = "{S}"', PASSWORD),
        ("curl-basic-user", "curl -u deploy:{S} https://ci.example.com/api", PASSWORD),
    ],
    "token": [
        ("in-query-string", "GET /api/items?access_token={S}&page=2 HTTP/1.1", OPAQUE_TOKEN),
        ("in-http-header", 'curl -H "X-Auth-Token: {S}" https://api.example.com', OPAQUE_TOKEN),
        ("bearer-in-log", "sending request with Bearer {S}", OPAQUE_TOKEN),
        ("basic-auth-header", "Authorization: Basic {S}", BASIC_CREDENTIALS),
        ("npm-in-npmrc", "//registry.npmjs.org/:_authToken={S}", NPM),
        ("pypi-in-pypirc", "[pypi]\n  username = __token__\n  password = {S}", PYPI),
    ],
    "secret": [
        ("client-secret-in-yaml", "oauth:\n  client_id: web\n  client_secret: '{S}'",
         OPAQUE_TOKEN),
        ("django-secret-key", "SECRET_KEY = '{S}'", DJANGO_SECRET_KEY),
        ("api-key-header-in-curl", 'curl -H "X-Api-Key: {S}" https://api.example.com',
         OPAQUE_TOKEN),
        ("in-toml", '[auth]\njwt_secret = "{S}"', PASSWORD),
    ],
}
# fmt: on


@dataclass(frozen=True)
class Leak:
    """`text` holds `secret`, which must come out as [REDACTED:`name`]."""

    id: str
    text: str
    secret: str
    name: str


LEAKS = [
    Leak(f"{name}/{scenario}", template.replace("{S}", secret), secret, name)
    for name, scenarios in SCENARIOS.items()
    for scenario, template, secret in scenarios
]


@pytest.mark.parametrize("case", LEAKS, ids=lambda case: case.id)
def test_secret_is_redacted_and_the_rest_kept(case: Leak) -> None:
    out = redact(case.text)
    marker = f"[REDACTED:{case.name}]"
    assert case.secret not in out
    assert marker in out
    # The surrounding text, and only it, is intact: the output is the input with the
    # secret swapped for its marker.
    assert out == case.text.replace(case.secret, marker)


@pytest.mark.parametrize("case", LEAKS, ids=lambda case: case.id)
def test_redacted_text_is_stable(case: Leak) -> None:
    once = redact(case.text)
    assert redact(once) == once
    assert find_secrets(once) == []


def test_there_are_enough_leak_scenarios() -> None:
    assert len(LEAKS) >= 45
    assert len({case.id for case in LEAKS}) == len(LEAKS)


# -- what must come back unchanged --------------------------------------------------------

UNCHANGED = {
    "call-result": "token = get_token()",
    "method-call": "self.token = client.fetch_token(scope='repo')",
    "environ-lookup": 'password = os.environ["PW"]',
    "environ-get": 'api_key = os.environ.get("OPENAI_API_KEY", "")',
    "none-default": "def connect(host: str, password=None) -> None:",
    "annotation": "token: str",
    "optional-annotation": "password: Optional[str] = None",
    "dataclass-fields": "@dataclass\nclass Creds:\n    user: str\n    password: str\n",
    "attribute": "secret = self.secret",
    "settings-attribute": "api_key=settings.api_key",
    "empty-string": 'password = ""',
    "shell-reference": "password=${DB_PASSWORD}",
    "shell-variable": "export GITHUB_TOKEN=$GH_TOKEN",
    "command-substitution": "export GITHUB_TOKEN=$(gh auth token)",
    "github-actions-expression": "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "angle-placeholder": "token=<your token>",
    "quoted-placeholder": 'password = "<your password here>"',
    "jinja-template": 'password: "{{ vault_db_password }}"',
    "format-string": 'log.info("token: %s", redacted)',
    "f-string": 'print(f"token={token!r}")',
    "keyword-argument": "client = Client(api_key=api_key, timeout=30)",
    "variable-assignment": "token = new_token",
    "constant-reference": "PASSWORD = DEFAULT_PASSWORD",
    "method-definition": "def secret(self) -> str:\n    return self._secret",
    "comparison": 'if password == confirm and token != "":',
    "masked": 'password = "********"',
    "path-to-secret": "NPM_TOKEN=/run/secrets/npm-token",
    "working-directory": "PWD=/home/dev/project\nOLDPWD=/home/dev",
    "short-value": "password=x",
    "url-without-password": "See https://github.com/org/repo and https://user@example.com/x",
    "url-with-port": "curl http://localhost:8080/health",
    "ssh-remote": "git@github.com:org/repo.git",
    "git-sha": "Reverted 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 (HEAD~2)",
    "uuid": "request_id=9b2f1c3e-4d5a-4b6c-8d7e-1f2a3b4c5d6e",
    "short-base64": "echo aGVsbG8gd29ybGQ= | base64 -d",
    "sk-in-prose": "Install the sk-learn package, not scikit; sk-image is another.",
    "sk-ant-in-prose": "Keys start with sk-ant- for Anthropic.",
    "slack-docs-placeholder": "Set SLACK_BOT_TOKEN to your xoxb-your-token value.",
    "slack-webhook-docs": "Webhooks look like https://hooks.slack.com/services/...",
    "prose-colon": "Token: the CLI reads it from the keychain.",
    "markdown": "# Auth\n\n- **password reset** flow\n- `token` refresh every 15 min\n",
    "brain-observation": "Task: Implement auth flow\nDecision: Chose JWT over sessions",
    "brain-decision": (
        "Decision: store the API token in the OS keychain, never in .env.\n"
        "Reason: tokens in files end up in git history."
    ),
    "password-policy": "The password must be at least 12 characters; tokens expire in 1h.",
    "typed-dict": "class Config(TypedDict):\n    token: str\n    secret: bytes\n",
    "json-schema": '{"password": {"type": "string", "minLength": 12}}',
    "pygments-style": "styles = {\n    Token: '#cccccc',\n    Comment: '#888888',\n}",
    "for-loop": "for token in tokens:\n    if token:\n        yield token",
    "begin-public-key": "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n",
    "authorization-prose": "Authorization: required for all endpoints except /health.",
    "bearer-prose": "Pass a Bearer token in the Authorization header.",
    "password-hash-column": "password_hash = bcrypt.hash(password)",
    "token-url": 'TOKEN_URL = "https://oauth2.googleapis.com/token"',
    "max-tokens": "max_tokens=4096, temperature=0.2",
}


@pytest.mark.parametrize("text", UNCHANGED.values(), ids=UNCHANGED.keys())
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text) == text


def test_there_are_enough_ordinary_samples() -> None:
    assert len(UNCHANGED) >= 30


# -- names, order and positions -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        (ANTHROPIC, "anthropic-key"),  # also starts with sk-
        (OPENAI_PROJECT, "openai-key"),
        ("GITHUB_TOKEN=" + GITHUB_CLASSIC, "github-token"),  # the token says more than the key
        ('password = "' + OPENAI_LEGACY + '"', "openai-key"),
        ("Authorization: Bearer " + JWT, "jwt"),
        ("https://oauth2:" + GITLAB_PAT + "@gitlab.com/group/project.git", "gitlab-token"),
    ],
    ids=[
        "anthropic-before-openai",
        "openai",
        "vendor-before-key",
        "vendor-in-password",
        "jwt-before-bearer",
        "vendor-in-url",
    ],
)
def test_the_most_specific_name_wins(text: str, name: str) -> None:
    assert [found[0] for found in find_secrets(text)] == [name]


def test_find_secrets_reports_positions_in_order() -> None:
    text = (
        f"export AWS_ACCESS_KEY_ID={AWS_KEY_ID}\n"
        f'config = {{"password": "{PASSWORD}"}}\n'
        f"git push https://{GITHUB_CLASSIC}@github.com/org/repo\n"
    )
    found = find_secrets(text)
    assert [(name, text[start:end]) for name, start, end in found] == [
        ("aws-access-key", AWS_KEY_ID),
        ("password", PASSWORD),
        ("github-token", GITHUB_CLASSIC),
    ]
    starts = [start for _, start, _ in found]
    assert starts == sorted(starts)
    assert text.index(AWS_KEY_ID) == found[0][1]


def test_find_secrets_positions_match_the_redacted_text() -> None:
    text = "\n".join(case.text for case in LEAKS)
    pieces, last = [], 0
    for name, start, end in find_secrets(text):
        assert last <= start < end
        pieces += [text[last:start], f"[REDACTED:{name}]"]
        last = end
    pieces.append(text[last:])
    assert "".join(pieces) == redact(text)


def test_only_the_password_of_a_url_goes() -> None:
    url = f"postgresql://reporting:{PASSWORD}@db-1.internal:5432/warehouse?sslmode=require"
    assert redact(url) == (
        "postgresql://reporting:[REDACTED:url-password]@db-1.internal:5432/warehouse"
        "?sslmode=require"
    )


def test_a_key_block_goes_whole_and_what_follows_stays() -> None:
    text = "before\n" + pem("RSA") + "\nafter: " + pem("EC") + "\nthe end"
    assert redact(text) == (
        "before\n[REDACTED:private-key]\nafter: [REDACTED:private-key]\nthe end"
    )


def test_every_name_is_documented() -> None:
    # docs/secrets.md is generated from the table (its own test keeps it current).
    doc = (Path(__file__).resolve().parent.parent / "docs" / "secrets.md").read_text()
    for pattern in SECRET_PATTERNS:
        assert f"`{pattern.name}`" in doc


@pytest.mark.parametrize("name", sorted({p.name for p in SECRET_PATTERNS}))
@pytest.mark.parametrize(
    "template",
    [
        "{M}",
        "password={M}",
        "PASSWORD={M}",
        'token = "{M}"',
        "secret: {M}",
        "{M}: abc123def",
        "{M}=abc123def",
        "Authorization: Bearer {M}",
        "https://user:{M}@host",
        "curl -u admin:{M} https://x",
        "hooks.slack.com/services/{M}",
    ],
)
def test_a_marker_never_looks_like_a_secret(name: str, template: str) -> None:
    text = template.replace("{M}", f"[REDACTED:{name}]")
    assert find_secrets(text) == []


# -- properties ---------------------------------------------------------------------------

# Pieces that combine into near-misses: keys, separators, quotes, prefixes, markers.
FRAGMENTS = [
    "password",
    "DB_PASSWORD",
    "token",
    "secret",
    "api_key",
    "=",
    ":",
    " = ",
    ": ",
    '"',
    "'",
    "`",
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    "${",
    "$",
    "@",
    "/",
    "://",
    "https://",
    "user",
    ".",
    "-",
    "_",
    "\n",
    " ",
    "abc123",
    "hunter22",
    "None",
    "self.",
    "get()",
    ",",
    "&",
    "*",
    "#",
    "%s",
    "<x>",
    "Bearer ",
    "Authorization: ",
    "curl -u ",
    "admin:",
    "eyJ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "[REDACTED:token]",
    "hooks.slack.com/services/",
    "T0123/B0123/abc",
    "xoxb-",
    "123456789012-",
    "glpat-",
    AWS_KEY_ID,
    AWS_SECRET,
    "aws_secret_access_key",
    GITHUB_CLASSIC,
    ANTHROPIC[:40],
    OPENAI_LEGACY,
    JWT[:60],
    STRIPE_LIVE,
    GOOGLE,
    PASSWORD,
    OPAQUE_TOKEN,
]
fragment_text = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=16).map("".join)


@example("Ry0TlDfvpMCvJRGE9jHFbDEiwsvrM97PfLKNQzkG")
@given(fragment_text | st.text())
def test_the_hint_is_never_silent_about_a_match(text: str) -> None:
    # redact() skips the table when the hint says no: every pattern that matches a text
    # it would search must make it say yes. A new pattern without its anchor in the hint
    # fails here. A row's words can be a gate on the whole text rather than part of the
    # match (the bare AWS secret: 40 characters, searched only in a text that names AWS):
    # hypothesis found such 40 characters alone, which redact() rightly leaves.
    def searched(p: SecretPattern) -> bool:
        lower = text.lower()
        return (not p.anchors and not p.words) or any(
            [a in text for a in p.anchors] + [w in lower for w in p.words]
        )

    if any(p.regex.search(text) and searched(p) for p in SECRET_PATTERNS):
        assert redact_module.might_hold_secret(text)


@given(st.text())
def test_redact_is_idempotent_on_any_text(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@given(fragment_text)
def test_redact_is_idempotent_on_secret_like_text(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
    assert find_secrets(once) == []


@given(fragment_text)
def test_find_secrets_agrees_with_redact(text: str) -> None:
    pieces, last = [], 0
    for name, start, end in find_secrets(text):
        assert last <= start < end
        pieces += [text[last:start], f"[REDACTED:{name}]"]
        last = end
    pieces.append(text[last:])
    assert "".join(pieces) == redact(text)


# Words stay under 16 letters: an all-letter AKIA… id (20) or AIza… key (39) is a real
# secret shape, so long runs of capitals are not "ordinary text".
letter_words = st.text(st.characters(categories=("Lu", "Ll", "Lo")), min_size=1, max_size=15)


@given(st.lists(letter_words).map(" ".join))
def test_letters_and_spaces_come_back_unchanged(text: str) -> None:
    assert redact(text) == text


# -- cost ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "token:1" * 30_000 + "(",
        "curl " * 40_000,
        "password_" * 20_000,
        base64.b64encode(random.Random(0).randbytes(150_000)).decode(),
    ],
    ids=["many-keys-one-line", "many-curls", "long-key", "base64-blob"],
)
def test_large_adversarial_input_stays_linear(text: str) -> None:
    # Each of these took minutes with an unbounded pattern; linear scans take well under
    # a second. The bound is loose because CI machines are slow and busy.
    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 10


def test_the_hint_is_kept_between_processes_and_made_again_when_stale(tmp_path: Path) -> None:
    """A tool call's first `might_hold_secret` reads the hint the last process kept, and
    does not import the table; a kept hint of another table is made again."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "VOYAGER_HOME": str(tmp_path)}
    code = (
        "import sys\nfrom voyager_brain import redact\n"
        "print(redact.might_hold_secret('ls -la'), redact.might_hold_secret('ghp_' + 'x' * 36),"
        " 'voyager_brain.secretkinds' in sys.modules)"
    )

    def run() -> str:
        return subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout.split()

    assert run() == ["False", "True", "True"]  # made from the table, and kept
    assert run() == ["False", "True", "False"]  # read back: the table is not imported
    kept = tmp_path / "cache" / "redact-hint.marshal"
    import marshal

    stale = marshal.loads(kept.read_bytes())
    stale[0] = [("providers.py", 1, 1)]  # the table's files as another version had them
    stale[1] = ()  # and a hint that would miss every secret
    kept.write_bytes(marshal.dumps(stale))
    assert run() == ["False", "True", "True"]
    assert redact_module._hint_data() == redact_module._hint_from_table()


def both_ways(check: Any, text: str) -> tuple[Any, Any]:
    """`check(text)` as the first megabyte is scanned (a string at a time), then as the
    bulk of a transcript is (`redact._bulk`, RE2)."""
    saved = redact_module._scanned
    try:
        redact_module._scanned = 0
        first = check(text)
        redact_module._scanned = redact_module._ONE_BY_ONE
        return first, check(text)
    finally:
        redact_module._scanned = saved


_ANCHOR_BITS = sorted(
    {a[: n + 1] for a in redact_module._hint().anchors for n in (0, 2, len(a) - 1)}
)


@given(
    st.lists(
        st.one_of(
            st.sampled_from(_ANCHOR_BITS),
            st.sampled_from(redact_module._hint().words),
            st.text(alphabet="aAsSkK-_ éİſ\u212a\ud800\n0x", max_size=6),
        ),
        max_size=12,
    ).map("".join)
)
def test_the_anchor_set_finds_what_one_search_per_anchor_finds(text: str) -> None:
    """After a megabyte, `_present` finds the anchors with one RE2 set rather than one
    search each: the same ones, whatever the text (non-ASCII, a lone surrogate)."""
    one_by_one, bulk = both_ways(redact_module._present, text)
    assert bulk == one_by_one


_SHAPE_BITS = [
    "MTEXAMPLE0123456789ABCDE.",
    "MTEXAMPLEabcdefghijklmnop.",  # no digit: the look-ahead refuses it, RE2's form does not
    "abcdef.",
    "0123456789abcdef0123456789abcdef-",
    "01234567-",
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-abcd",
]


@given(
    st.lists(
        st.one_of(st.sampled_from(_SHAPE_BITS), st.text(alphabet="aM0f.-_ \ud800", max_size=6)),
        max_size=10,
    ).map("".join)
)
def test_the_shapes_filter_finds_every_shape_the_regex_finds(text: str) -> None:
    """After a megabyte, RE2's form of the shapes (their look-arounds dropped) rules a text
    out before the shapes' own regex runs: it never rules out one the regex finds."""
    one_by_one, bulk = both_ways(redact_module._holds_a_shape, text)
    assert bulk == one_by_one


def test_the_shapes_filter_is_built() -> None:
    """The shapes today (Discord's look-ahead included) have an RE2 form: the filter runs."""
    assert redact_module._bulk()[2] is not None


def test_redaction_is_the_same_before_and_after_the_anchor_set() -> None:
    """Every leak scenario redacts to the same text whichever way anchors are found."""
    saved = redact_module._scanned
    try:
        redact_module._scanned = redact_module._ONE_BY_ONE
        redact_module._memo.clear()  # each way redacts every text itself
        fast = [redact(case.text) for case in LEAKS]
        redact_module._scanned = 0
        redact_module._memo.clear()
        slow = [redact(case.text) for case in LEAKS]
    finally:
        redact_module._scanned = saved
    assert fast == slow


@given(
    st.lists(st.sampled_from([case.text for case in LEAKS] + ["command", "ls -la"]), max_size=30)
)
def test_a_short_text_redacts_the_same_from_the_memo(texts: list[str]) -> None:
    """Short texts' redactions are kept: asked again, the same text as a fresh scan."""
    for text in texts:
        assert redact(text) == redact_module._scan(text)[0]


def test_the_memo_stays_bounded() -> None:
    for n in range(redact_module._MEMO_SIZE + 10):
        redact(f"short text {n}")
    assert len(redact_module._memo) <= redact_module._MEMO_SIZE
    long = "x" * (redact_module._SHORT + 1)
    assert redact(long) == long and long not in redact_module._memo
