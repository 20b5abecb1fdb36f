"""Find secrets in text and replace them before anything reaches a git-tracked file.

Every brain entry goes through :func:`redact` before it is stored: git history is
forever, so a token that lands in ``.voyager/`` once has leaked for good.

Each secret becomes ``[REDACTED:<name>]``, where ``<name>`` is one of:

==================  ====================================================================
``private-key``     PEM / OpenSSH / PGP private key blocks (an unterminated block runs
                    to the end of the text)
``jwt``             JSON Web Tokens (``eyJ….eyJ….sig``)
``anthropic-key``   ``sk-ant-…``
``openai-key``      ``sk-…``, ``sk-proj-…``, ``sk-svcacct-…``, ``sk-admin-…``
``github-token``    ``ghp_`` / ``gho_`` / ``ghu_`` / ``ghs_`` / ``ghr_`` and ``github_pat_``
``gitlab-token``    ``glpat-`` and the other ``gl…-`` token prefixes
``slack-webhook``   the secret path of ``hooks.slack.com/services/…`` (the host stays)
``slack-token``     ``xoxb-`` / ``xoxp-`` / ``xoxa-`` / ``xoxr-`` / ``xoxs-`` / ``xoxe-``,
                    ``xapp-``
``stripe-key``      ``sk_`` / ``rk_`` / ``pk_`` + ``live_`` / ``test_``, ``whsec_``
``google-api-key``  ``AIza…``
``aws-access-key``  ``AKIA…`` / ``ASIA…`` access key ids
``aws-secret-key``  the value of ``aws_secret_access_key`` / ``SecretAccessKey``
``url-password``    the password in ``scheme://user:password@host`` (the rest stays)
``password``        values of ``*password`` / ``*passwd`` / ``*passphrase`` / ``*pwd``
                    keys, and of ``curl -u user:password``
``token``           values of ``*token`` keys, ``Authorization:`` / ``Bearer`` credentials,
                    npm and PyPI tokens
``secret``          values of ``*secret`` / ``*secret_key`` / ``*api_key`` keys
==================  ====================================================================

Only the secret itself is replaced: in ``password = "hunter2"`` the key and the quotes
stay, so the entry still says *what* was configured.

Key/value assignments are the hard part, because code is full of them. Only *literal*
values count: a non-empty quoted string, or an unquoted run that is not a call, an
attribute, a ``$VAR`` / ``${VAR}`` reference, a ``<placeholder>``, a path, ``None`` and
friends. How strict the unquoted case is depends on the syntax (see ``_unquoted``).

:func:`redact` is idempotent, which ``doctor`` relies on (it re-scans stored entries):
no pattern matches a ``[REDACTED:…]`` marker or a key/value pair whose value is one.
"""

from __future__ import annotations

import re
from bisect import bisect_right

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "SECRET_PATTERNS",
    "SecretPattern",
    "find_secrets",
    "might_hold_secret",
    "redact",
    "redact_json",
]


class SecretPattern:
    """One kind of secret: where it is (``regex``) and which part of a match is secret.
    (Plain slotted classes here, not Records: making a namedtuple class costs a hook a
    few tenths of a millisecond, and redaction is on the tool-call path.)"""

    __slots__ = ("group", "name", "regex")

    def __init__(self, name: str, regex: re.Pattern[str], group: int = 0) -> None:
        self.name, self.regex, self.group = name, regex, group

    def __repr__(self) -> str:
        return f"SecretPattern({self.name!r}, {self.regex.pattern!r}, {self.group})"


def _pattern(name: str, regex: str, flags: int = 0) -> SecretPattern:
    """Compile `regex` (verbose); the secret is the group named ``value`` if there is one."""
    compiled = re.compile(regex, flags | re.VERBOSE)
    return SecretPattern(name, compiled, compiled.groupindex.get("value", 0))


# -- building blocks for key = value assignments ------------------------------------------

# Keys end with the keyword, so DB_PASSWORD, GITHUB_TOKEN and client_secret count but
# password_hash, token_url and secret_name (not secrets themselves) do not.
_KEYWORDS = {
    "password": r"pass(?:word|wd|phrase)|pwd",
    "token": r"token",
    "secret": r"secret(?:[_-]?key)?|api[_-]?key",
}
# Shell variables are upper case by convention, and that is what tells them from code.
_ENV_KEYWORDS = {
    "password": r"PASS(?:WORD|WD|PHRASE)|PWD",
    "token": r"TOKEN",
    "secret": r"SECRET(?:_?KEY)?|API_?KEY",
}

# Characters of an unquoted value. Quotes, brackets and separators end it, as does `&`
# (the next parameter in a query string, or a shell operator) and `|` (a pipe).
_VC = r"""[^\s"'`,;(){}\[\]<>&|]"""
# A value's non-dot character: a sentence may end right after a value.
_VC_NODOT = r"""[^\s"'`,;(){}\[\]<>&|.]"""
# What may follow a whole unquoted value: anything that cannot continue an expression.
# An opening bracket or parenthesis is missing on purpose: `get_token()` and
# `os.environ["PW"]` are code.
_END = r"""(?=\.*(?:[\s"'`,;)}\]>&|]|\Z))"""
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_MAX_UNQUOTED = 1000


def _unquoted(*, identifiers_are_code: bool, needs_digit: bool) -> str:
    """The regex of an unquoted literal value (group ``value``) and what must follow it.

    At least 6 characters: shorter values (``password=x``, ``token=abc``) are far more
    often examples and loop variables than real credentials, and a real secret is longer.
    """
    checks = [
        # Longer runs are data (minified code, base64 blobs) more often than a credential,
        # and the bound keeps every check below linear in the length of the text.
        rf"(?!{_VC}{{{_MAX_UNQUOTED + 1}}})",
        # At least 6 characters, not counting dots that end a sentence.
        rf"(?={_VC}{{5,}}{_VC_NODOT})",
        # $VAR / ${VAR} / %s / *** / @file / !vault / # comment, or `==`, `::`, `~/`.
        r"(?![$%*@!#=:~])",
        rf"(?!(?i:none|null|nil|true|false|undefined){_END})",
        # A path names where a secret is kept; it is not the secret.
        rf"(?!\.{{0,2}}/[A-Za-z0-9._/-]*{_END})",
    ]
    if identifiers_are_code:
        checks += [
            # `token = new_token`, `api_key=api_key`: a variable, not a value. Real
            # secrets almost always have a digit or a symbol somewhere.
            rf"(?![A-Za-z_]+{_END})",
            # `secret = self.secret`, `token: settings.api.token`
            rf"(?!{_IDENT}(?:\.{_IDENT})+{_END})",
        ]
    if needs_digit:
        checks += [rf"(?={_VC}*?[0-9])", rf"(?={_VC}*?[A-Za-z])"]
    return "(?P<value>" + "".join(checks) + rf"{_VC}+(?<!\.)){_END}"


def _key(keyword: str) -> str:
    """A key that ends with `keyword`, maybe quoted (``"password"``) or subscripted
    (``environ["TOKEN"]``).

    A closing bracket is accepted only after a closing quote: a bare ``token]`` is how a
    ``[REDACTED:github-token]`` marker ends, and it must not look like a key.
    """
    # The look-behind stops the lazy prefix from starting in the middle of a word, which
    # would make a long run of word characters quadratic.
    return (
        r"""(?P<kq>["'`])?(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?"""
        rf"(?i:{keyword})(?(kq)(?P=kq)\]?)"
    )


# One character of a quoted value: an escape, or anything but the closing quote.
_QCHAR = r"(?:\\.|(?!(?P=q))[^\\\n])"
_QUOTED_VALUE = rf"""
    (?P<q>["'`])
    (?P<value>
        (?![\s,;()])                            # `print("token: ", tok, " x")`
        (?!\$[{{(]|\$[A-Za-z_][A-Za-z0-9_]*(?P=q))  # shell: $VAR, braced, $(cmd)
        (?![{{])                                # format fields, templates
        (?!<[^<>\n]*>(?P=q))                    # <your token here>
        (?!%[s(])                               # %s, %(password)s
        (?![*xX]+(?P=q))                        # ******, XXXX
        (?!{_QCHAR}*?\*\*\*)                    # :**** is masked already
        (?!\#[0-9A-Fa-f]{{3,8}}(?P=q))          # a colour: `Token: "#cccccc"`
        (?!(?i:none|null|nil|true|false|undefined)(?P=q))
        (?!\.{{0,2}}/[A-Za-z0-9._/-]*(?P=q))    # a path
        (?!{_QCHAR}*?\[REDACTED:)               # redacted already (idempotence)
        (?={_QCHAR}*?[A-Za-z0-9])               # `token = "'"` is punctuation
        {_QCHAR}+
        (?<!\s)                                 # `token = "Bearer " + jwt`
    )
    (?P=q)(?=[\s,;:.)}}\]>]|\Z)
"""

# A Python annotation between key and `=`: `password: str = "..."`.
_ANNOTATION = rf"""
    (?:[ \t]*:[ \t]*{_IDENT}(?:\.{_IDENT})*(?:\[[^\]\n]*\])?
       (?:[ \t]*\|[ \t]*{_IDENT}(?:\.{_IDENT})*(?:\[[^\]\n]*\])?)*)?
"""
# `=` (not `==`), `:` (not `::`), Go's `:=`, Ruby/PHP `=>`.
_QUOTED_SEP = r"[ \t]*(?::=|=>|=(?!=)|:(?!:))[ \t]*"
_EQUALS_SEP = r"[ \t]*(?::=|=>|=(?!=))[ \t]*"
_COLON_SEP = r"[ \t]*:(?![:=])[ \t]*"


def _assignments(name: str, keyword: str) -> tuple[SecretPattern, SecretPattern]:
    """Quoted values, and unquoted values after `=`, for keys ending with `keyword`."""
    key = _key(keyword)
    quoted = _pattern(name, key + _ANNOTATION + _QUOTED_SEP + _QUOTED_VALUE)
    # Plain `=` is where code lives (`token = new_token`), so identifiers are code there.
    equals = _pattern(
        name, key + _EQUALS_SEP + _unquoted(identifiers_are_code=True, needs_digit=False)
    )
    return quoted, equals


def _env_assignment(name: str, keyword: str) -> SecretPattern:
    """``DB_PASSWORD=value``: an upper-case key and no spaces around `=`.

    That is a shell or .env assignment (also ``export X=``, ``docker run -e X=``,
    Dockerfile ``ENV X=``), where a value is always a literal, so even a plain word is
    taken; formatted code puts spaces around `=`.
    """
    return _pattern(
        name,
        rf"(?<![A-Za-z0-9_.-])[A-Z0-9_]*(?:{keyword})="
        + _unquoted(identifiers_are_code=False, needs_digit=False),
    )


def _colon_assignment(name: str, keyword: str) -> SecretPattern:
    """``password: hunter2`` (YAML, HTTP headers) with an unquoted value.

    Prose uses the same shape ("Token: see the wiki"), and so do annotations
    (``token: str``), so the value must mix letters and digits: a YAML password made of
    letters only is missed, a price paid to keep ordinary notes intact.
    """
    return _pattern(
        name,
        _key(keyword) + _COLON_SEP + _unquoted(identifiers_are_code=True, needs_digit=True),
    )


# -- the table ----------------------------------------------------------------------------

# Token bodies are delimited by characters that cannot continue them; `\b` would treat
# `-` and `_` as boundaries and match inside longer identifiers.
_B64URL = "A-Za-z0-9_-"


def _build_table() -> tuple[SecretPattern, ...]:
    return (
        # First: a key block contains base64 that other patterns would match piecemeal.
        _pattern(
            "private-key",
            r"""-----BEGIN[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----
                .*?
                (?:-----END[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----|\Z)""",
            re.DOTALL,
        ),
        # Before the vendor keys and `Bearer`: a JWT is the more precise description.
        _pattern(
            "jwt",
            rf"(?<![{_B64URL}])eyJ[{_B64URL}]{{8,}}\.ey[{_B64URL}]{{8,}}\.[{_B64URL}]*",
        ),
        # Before OpenAI: both start with `sk-`.
        _pattern("anthropic-key", rf"(?<![{_B64URL}])sk-ant-[{_B64URL}]{{20,}}"),
        _pattern(
            "openai-key",
            rf"""(?<![{_B64URL}])sk-(?!ant-)
                (?:
                    (?:proj|svcacct|admin|None)-(?=[A-Za-z_-]*[0-9])[{_B64URL}]{{20,}}
                  | (?=[A-Za-z]*[0-9])[A-Za-z0-9]{{32,}}   # legacy: 48 alphanumerics
                )
                (?![{_B64URL}])""",
        ),
        _pattern(
            "github-token",
            r"""(?<![A-Za-z0-9_])
                (?:gh[pousr]_[A-Za-z0-9]{36,255}
                  | github_pat_[A-Za-z0-9]{20,}_[A-Za-z0-9]{40,})
                (?![A-Za-z0-9_])""",
        ),
        _pattern(
            "gitlab-token",
            # pat: personal/project/group, dt: deploy, rt/rtr: runner, cbt: CI build,
            # ptt: pipeline trigger, ft: feed, imt: incoming mail, agent: k8s agent,
            # oas: OAuth app secret, soat: SCIM, ffct: feature flags, wt: workspace.
            # Newer routable tokens carry `.`-separated parts.
            rf"""(?<![{_B64URL}])
                gl(?:pat|dt|rtr|rt|cbt|ptt|ft|imt|agent|oas|soat|ffct|wt)-
                [{_B64URL}]{{20,}}(?:\.[{_B64URL}]+)*""",
        ),
        # The host stays, so the entry still says a Slack webhook was involved.
        _pattern(
            "slack-webhook",
            r"""hooks\.slack\.com/(?:services|workflows|triggers)/
                (?P<value>[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)+)""",
        ),
        # Real tokens carry numeric ids right after the prefix; `xoxb-your-token` does not.
        _pattern(
            "slack-token",
            r"""(?<![A-Za-z0-9_.-])
                (?:(?:xoxe\.)?xox[abeoprs]|xapp)-[0-9]+-[A-Za-z0-9-]{8,}""",
        ),
        _pattern(
            "stripe-key",
            r"""(?<![A-Za-z0-9_])
                (?:(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,} | whsec_[A-Za-z0-9]{24,})
                (?![A-Za-z0-9_])""",
        ),
        _pattern("google-api-key", rf"(?<![{_B64URL}])AIza[{_B64URL}]{{35}}(?![{_B64URL}])"),
        _pattern("aws-access-key", r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        _pattern(
            "token",
            r"""(?<![A-Za-z0-9_-])
                (?:npm_[A-Za-z0-9]{36} | pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})
                (?![A-Za-z0-9_-])""",
        ),
        # AWS secrets are 40 base64 characters with no prefix: only the key says what they are.
        _pattern(
            "aws-secret-key",
            r"""(?i:(?:aws_?)?secret_?access_?key)["'`]?[ \t]*(?::=|=>|[:=])[ \t]*["'`]?
                (?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])""",
        ),
        # The password runs to the last `@` before the host, since people do not escape `@`.
        # A redaction marker cannot be a password: brackets are not password characters here.
        _pattern(
            "url-password",
            r"""(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://
                [^\s:/@?#"'`<>\[\]]*:
                (?P<value>(?![${]|%s@|%\(|\*+@)[^\s/?"'`<>\[\]]+)
                @[^\s/?#@"'`<>]""",
        ),
        # `Authorization: Basic dXNlcjpwYXNz`, `-H "Authorization: Bearer …"`. The scheme is
        # required so that "Authorization: required for all endpoints" stays; the credential
        # must have a digit or an inner capital, which base64 and random tokens have and
        # English words do not.
        _pattern(
            "token",
            r"""(?i:authorization)["'`]?[ \t]*[:=][ \t]*["'`]?
                (?i:bearer|basic|token|bot)[ \t]+
                (?P<value>
                    (?=[A-Za-z0-9._~+/-]{8})
                    (?=[A-Za-z0-9._~+/=-]*?[0-9]|.[A-Za-z0-9._~+/=-]*?[A-Z])
                    [A-Za-z0-9._~+/-]+=*)""",
        ),
        _pattern(
            "token",
            r"""(?<![A-Za-z0-9_-])[Bb]earer[ \t]+
                (?P<value>
                    (?=[A-Za-z0-9._~+/-]{16})
                    (?=[A-Za-z0-9._~+/=-]*?[0-9]|.[A-Za-z0-9._~+/=-]*?[A-Z])
                    [A-Za-z0-9._~+/-]+=*)""",
        ),
        _pattern(
            "password",
            r"""\bcurl\b[^\n]{0,1000}?[ \t](?:-u|--user)[ \t=]+["']?[^\s:"'@\[\]]+:
                (?P<value>(?![$%{*])[^\s"'\[\]]+)""",
        ),
        # Key/value assignments last: the more specific names above win when the value is a
        # recognisable token (`GITHUB_TOKEN=ghp_…` is a github-token).
        *(p for name, kw in _KEYWORDS.items() for p in _assignments(name, kw)),
        *(_env_assignment(name, kw) for name, kw in _ENV_KEYWORDS.items()),
        *(_colon_assignment(name, kw) for name, kw in _KEYWORDS.items()),
    )


_TABLE: tuple[SecretPattern, ...] | None = None


def _table() -> tuple[SecretPattern, ...]:
    """The patterns, compiled on first use: compiling them costs a hook about 20 ms,
    which `might_hold_secret` lets the tool-call check skip for ordinary text."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _build_table()
    return _TABLE


if TYPE_CHECKING:
    #: Every kind of secret, in the order they are tried (compiled on first use).
    SECRET_PATTERNS: tuple[SecretPattern, ...]


def __getattr__(name: str) -> Any:
    if name == "SECRET_PATTERNS":
        return _table()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Every pattern of the table needs one of these in the text: a key word that ends a
# secret-looking key (any case), a vendor prefix, a credential-bearing URL, a header or a
# key block. Text without any of them holds nothing the table would replace (the tests of
# every pattern go through this check), so most text skips the table, and the tool-call
# path never compiles it. Extend these with every new pattern. Plain substring searches:
# a regex alternation of the same words took 400 µs on 2 KB of text, these take 60.
_HINT_WORDS = (
    "pass",
    "pwd",
    "token",
    "secret",
    "apikey",
    "api_key",
    "api-key",
    "authoriz",
    "bearer",
)
_HINT_ANCHORS = (
    "-----BEGIN", "eyJ", "sk-", "sk_", "rk_", "pk_", "whsec_", "ghp_", "gho_", "ghu_",
    "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glrt-", "glrtr-", "glcbt-",
    "glptt-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-", "glffct-", "glwt-",
    "hooks.slack.com", "xox", "xapp-", "AIza", "AKIA", "ASIA", "npm_", "pypi-", "://",
    "curl",
)  # fmt: skip


def might_hold_secret(text: str) -> bool:
    """False when `redact(text)` is certainly `text`: cheap, and no table compiled."""
    if any(anchor in text for anchor in _HINT_ANCHORS):
        return True
    lower = text.lower()
    return any(word in lower for word in _HINT_WORDS)


class _Marker:
    """A ``[REDACTED:name]`` in the text being redacted, and where its secret was."""

    __slots__ = ("end", "name", "source_end", "source_start", "start")

    def __init__(self, start: int, end: int, name: str, source_start: int, source_end: int) -> None:
        self.start, self.end, self.name = start, end, name  # start, end: in the redacted text
        self.source_start, self.source_end = source_start, source_end  # in the original


def _scan(text: str) -> tuple[str, list[_Marker]]:
    """The redacted text and its markers.

    Patterns run in table order, each on the text as redacted by the ones before it, so
    that a pattern sees what it will see when the output is scanned again: a token glued
    to a private key block ends at the marker in both scans. That, and no pattern
    matching a marker, is what makes `redact` idempotent. A match that would overlap a
    marker is dropped, so the earlier (more specific) pattern wins.
    """
    current = text
    markers: list[_Marker] = []
    if not might_hold_secret(text):
        return text, markers
    for pattern in _table():
        found = _search(pattern, current, markers)
        if found:
            current, markers = _replace(current, markers, found)
    return current, markers


def _search(pattern: SecretPattern, current: str, markers: list[_Marker]) -> list[_Marker]:
    """Markers for the matches of `pattern` in `current` that leave `markers` alone."""
    starts = [mk.start for mk in markers]
    ends = [mk.end for mk in markers]
    found: list[_Marker] = []
    pos = 0
    while (m := pattern.regex.search(current, pos)) is not None:
        start, end = m.span(pattern.group)
        i = bisect_right(starts, start)
        clear = (i == 0 or ends[i - 1] <= start) and (i == len(starts) or starts[i] >= end)
        if start < end and clear:
            # Where the secret was in the original text: counted from the end of the
            # closest marker before it (markers are sorted and never overlap).
            j = bisect_right(ends, start) - 1
            offset = 0 if j < 0 else markers[j].source_end - ends[j]
            found.append(_Marker(start, end, pattern.name, start + offset, end + offset))
            pos = max(m.end(), m.start() + 1)
        else:
            # Look again just past this start: a shorter match of the same pattern may
            # hold a secret outside the marker.
            pos = m.start() + 1
    return found


def _replace(
    current: str, markers: list[_Marker], found: list[_Marker]
) -> tuple[str, list[_Marker]]:
    """Put markers for `found` into `current`, moving the existing markers along."""
    parts: list[str] = []
    placed: list[_Marker] = []
    last = shift = 0
    both = [(mk, False) for mk in markers] + [(mk, True) for mk in found]
    for mk, new in sorted(both, key=lambda pair: pair[0].start):
        replacement = f"[REDACTED:{mk.name}]" if new else current[mk.start : mk.end]
        parts += (current[last : mk.start], replacement)
        start = mk.start + shift
        shift += len(replacement) - (mk.end - mk.start)
        placed.append(
            _Marker(start, start + len(replacement), mk.name, mk.source_start, mk.source_end)
        )
        last = mk.end
    parts.append(current[last:])
    return "".join(parts), placed


def find_secrets(text: str) -> list[tuple[str, int, int]]:
    """(pattern name, start, end) of each secret found, in order, non-overlapping.

    Patterns are tried in table order and a match that overlaps one already taken is
    dropped, so the most specific name wins.
    """
    return [(mk.name, mk.source_start, mk.source_end) for mk in _scan(text)[1]]


def redact(text: str) -> str:
    """Return text with every secret replaced by [REDACTED:<name>].

    Idempotent: redact(redact(t)) == redact(t).
    """
    return _scan(text)[0]


def redact_json(value: object) -> object:
    """`value` (a JSON value) with every string in it redacted, object keys included."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    if isinstance(value, dict):
        return {redact(str(key)): redact_json(item) for key, item in value.items()}
    return value
