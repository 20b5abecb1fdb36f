"""The secret corpus, generated from the table's rows, and the benign corpus.

Each row's example (obviously fake, real-shaped) is embedded in several places an agent
sees secrets: an observation, a shell export, a JSON value, a YAML line, a log line. The
benign lines are what a coding project is full of and must come back unchanged: hashes,
UUIDs, base64 images, code that reads a secret from the environment, prose about tokens.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass

from voyager_brain.redact import SECRET_PATTERNS
from voyager_brain.secretkinds import ALL_KINDS, PROVIDER_KINDS, Kind


@dataclass(frozen=True)
class Sample:
    """`text` holds a secret; redacted, it must read `expected`."""

    id: str
    kind: Kind
    text: str
    expected: str
    secret: str


def redacted_example(kind: Kind) -> tuple[str, str]:
    """The row's example with its secret replaced by the marker, and the secret."""
    pattern = SECRET_PATTERNS[ALL_KINDS.index(kind)]
    match = pattern.regex.search(kind.example)
    assert match is not None, f"{kind.name} ({kind.provider}): the example does not match"
    start, end = match.span(pattern.group)
    marker = f"[REDACTED:{kind.name}]"
    return kind.example[:start] + marker + kind.example[end:], kind.example[start:end]


def _json(value: str) -> str:
    return json.dumps({"service": "deploy", "value": value})


CONTEXTS: dict[str, Callable[[str], str]] = {
    "observation": lambda s: (
        f"Observed while debugging the deploy: the config held {s} and it was rotated."
    ),
    "shell-export": lambda s: f'export DEPLOY_SETTING="{s}"',
    "json-value": _json,
    "yaml-line": lambda s: f"service:\n  setting: {s}\n  region: eu-west-1\n",
    "log-line": lambda s: f"2026-03-21T10:00:00Z INFO client configured with {s} (from env)",
}
# A context kind's example already is its context (`password = "..."`, a header, a URL).
CONTEXT_ONLY = ("observation", "log-line")


def _samples() -> list[Sample]:
    samples = []
    providers = {id(kind) for kind in PROVIDER_KINDS}
    for index, kind in enumerate(ALL_KINDS):
        expected, secret = redacted_example(kind)
        is_shape = id(kind) in providers or kind.name in ("private-key", "jwt")
        for context, wrap in CONTEXTS.items():
            if not is_shape and context not in CONTEXT_ONLY:
                continue
            samples.append(
                Sample(
                    f"{index:03d}-{kind.name}-{kind.provider.split()[0]}/{context}",
                    kind,
                    wrap(kind.example),
                    wrap(expected),
                    secret,
                )
            )
    return samples


SECRET_SAMPLES = _samples()

_PNG = base64.b64encode(bytes(range(256)) * 3).decode()

BENIGN = {
    "git-sha": "Reverted 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 (HEAD~2)",
    "short-sha": "fixed in a1b2c3d, see also 9f8e7d6",
    "sha256-line": "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "md5-sum": "d41d8cd98f00b204e9800998ecf8427e  empty.txt",
    "docker-digest": ("image: python@sha256:"
                      "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"),
    "npm-integrity": ('"integrity": "sha512-Kq5sNclPz7QV2+lfQIuu7unerVRzC+ir5oXpNVFj3Hg/'
                      'nu8Yr6hfXN+cyXgqHj3ugd2QlkzGxLiZgNb7Ey9c7g=="'),
    "uuid": "request_id=9b2f1c3e-4d5a-4b6c-8d7e-1f2a3b4c5d6e",
    "uuid-key": 'idempotency_key = "9b2f1c3e-4d5a-4b6c-8d7e-1f2a3b4c5d6e"',
    "uuid-list": "ids: 123e4567-e89b-12d3-a456-426614174000, 00000000-0000-0000-0000-000000000000",
    "base64-image": f'<img src="data:image/png;base64,{_PNG}">',
    "base64-css": f"background: url(data:image/png;base64,{_PNG[:200]});",
    "environ-subscript": 'api_key = os.environ["OPENAI_API_KEY"]',
    "environ-get": 'token = os.environ.get("GITHUB_TOKEN")',
    "getenv": 'SIGNING_KEY = os.getenv("SIGNING_KEY", "")',
    "process-env": "const stripe = new Stripe(process.env.STRIPE_SECRET_KEY);",
    "go-getenv": 'secret := os.Getenv("WEBHOOK_SECRET")',
    "rust-env": 'let key = std::env::var("SENDGRID_API_KEY")?;',
    "shell-reference": 'curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com',
    "actions-secret": "env:\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n",
    "dotenv-example": "OPENAI_API_KEY=<your key here>\nDATABASE_URL=postgres://localhost/app",
    "prose-tokens": "Tokens expire after an hour; refresh them with the refresh token flow.",
    "prose-prefixes": ("GitHub tokens start with ghp_, Slack bot tokens with xoxb-, "
                       "Stripe keys with sk_live_."),
    "prose-jwt": "A JWT starts with eyJ because every header is a JSON object.",
    "prose-keys": "Rotate the signing key every 90 days and keep the API key out of git.",
    "primary-key": "id = Column(Integer, primary_key=True)",
    "cache-key": 'cache_key = "user-profile-settings-v2"',
    "sort-key": "sort_key: created_at",
    "foreign-key": 'user_id = ForeignKey("users.id", on_delete="CASCADE")',
    "dict-key": "for key, value in settings.items():",
    "monkey": "monkeypatch.setattr(module, 'hotkey', None)",
    "translation-key": 'errorKey: "auth.login.invalid_password_message"',
    "keyboard": "Press the Tab key, then Enter; the shortcut key is Ctrl+K.",
    "semver": "Bumped requests 2.31.0 -> 2.32.3 and urllib3 to 2.2.2",
    "hex-colour": "theme = {'primary': '#1f6feb', 'danger': '#d73a49'}",
    "ip-and-port": "Listening on 0.0.0.0:8080 and 127.0.0.1:5432",
    "url-without-password": "Cloned https://github.com/org/repo.git and git@github.com:org/repo",
    "url-with-user": "ssh://deploy@build.example.com:2222/srv/app",
    "timestamp-colon": "2026-03-21 14:30:00,123 level=INFO msg=ready",
    "test-ids": "tests/test_api.py::test_token_refresh[case-1] PASSED",
    "python-traceback": 'File "/srv/app/auth.py", line 42, in get_token\n    return self._token',
    "long-identifier": "OrganizationMembershipInvitationRepositoryImplementationFactory.create()",
    "dotted-names": "Module.SubModuleNameForTesting.method_name_that_is_long_enough_x",
    "api-path": "GET /api/v1/orders/12345/items?page=2&per_page=50",
    "skip-words": "SKIPPED: DISK quota ASK the admin; TASK_ID=42",
    "pattern-words": "patterns matched: path, patch, patience",
    "python-re-name": "re_compiled_patternsforthewholemodule = None",
    "dotted-constant": "MAIN_MODULE_PATH_VARIABLE1.module.other_long_function_name_here_x",
    "sql": "SELECT user_id, api_key_hash FROM credentials WHERE revoked = false;",
    "pubkey": ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
               " dev@laptop"),
    "public-key-block": ("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n"
                         "-----END PUBLIC KEY-----"),
    "certificate": "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
    "masked": "OPENAI_API_KEY=sk-...abcd (masked in the dashboard)",
    "placeholder-token": 'token = "<paste your token>"',
    # Look-alikes of the shapes added for issue 26: a bare AWS secret (40 base64
    # characters in a text that names AWS), `mysql -p`, `token <value>`.
    "aws-git-sha": "AWS deploy of 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 to eu-west-1",
    "aws-lockfile": ('"node_modules/@aws-sdk/client-s3": {"integrity": "sha512-Kq5sNclPz7QV2+lfQ'
                     'Iuu7unerVRzC+ir5oXpNVFj3Hg/nu8Yr6hfXN+cyXgqHj3ugd2QlkzGxLiZgNb7Ey9c7g=="}'),
    "aws-go-sum": ("github.com/aws/aws-sdk-go v1.44.0 "
                   "h1:jwnq/7Tx5h7bQnOYVb7D3JcHk2fWTUe3aaaU5vXGgkA="),
    "aws-camel-case": "AWS client: AwsS3ClientConfigurationBuilderFactoryV2.create()",
    "aws-s3-path": "aws s3 sync ./dist s3://ExampleBucket/Release2/WebAssets/AppBundle/x",
    "aws-base32": "AWS MFA seed JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXPJBSWY3DP (test device)",
    "aws-key-prose": "aws_secret_access_key is read from ~/.aws/credentials, never from git",
    "mysql-prompt": "mysql -u root -p app_db",
    "mysql-p-port": "mysql -h db.internal -u app -p 3306 and mysql -P 3306 -u app -p",
    "mysql-then-mkdir": "mysql -u app -e 'select 1'; mkdir -p build",
    "token-prose": "token refresh happens automatically when the session expires",
    "token-long-word": "the token abstraction_layer_for_everything is documented",
    "token-uuid": "token 9b2f1c3e-4d5a-4b6c-8d7e-1f2a3b4c5d6e was revoked",
    "secret-prose": "Secret management is handled by the platform team's vault service.",
    "redacted-already": ("GITHUB_TOKEN=[REDACTED:github-token] and "
                         "AccountKey=[REDACTED:azure-storage-key]"),
}  # fmt: skip
