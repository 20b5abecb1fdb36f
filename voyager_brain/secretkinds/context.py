"""Secrets told by their context: key blocks, JWTs, assignments to secret-looking names,
``Authorization`` headers, passwords in URLs; and the entropy test."""

from __future__ import annotations

import re

from .kind import B64, B64URL, CLOUD, DATABASE, GENERIC, Kind
from .kind import fake as _f

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .kind import Check

# -- the entropy test ----------------------------------------------------------------------

#: Shannon entropy, in bits per character, below which a value is too repetitive to be
#: a generated key (``aaaaaaaaaaaaaaaa1111``: 0.7, ``1111222233334444``: 2.0). Entropy
#: cannot tell names from keys (``user-profile-settings-v2`` scores 3.7, as much as
#: random hex of 16 characters, whose median is 3.4): the words rule of `looks_random`
#: does that. 2.5 keeps 99.6% of random 16-character hex values, 3.3 only 37%.
ENTROPY_BITS = 2.5
_MIN_RANDOM_LENGTH = 16
# A table, not a regex: nothing is compiled when the module loads.
_SEPARATORS = str.maketrans("-_.:/@", "      ")


def _entropy(value: str) -> float:
    import math  # here: an extension module, loading it costs a hook that never needs it

    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str) -> bool:
    """Whether `value` looks like a generated key rather than a name, a word or an id.

    At least 16 characters; letters and digits both (a random 16-character alphanumeric
    value has no digit 6% of the time, and is missed then; at 24 characters, 2%); not
    words and numbers joined by ``-_.:/@`` (``build-cache-linux-x64-py312``: every part
    a word, a number or at most 5 characters); not a UUID; and an entropy of at least
    :data:`ENTROPY_BITS` bits per character.
    """
    if len(value) < _MIN_RANDOM_LENGTH:
        return False
    if not any(c.isdigit() for c in value) or not any(c.isalpha() for c in value):
        return False
    parts = value.translate(_SEPARATORS).split()
    if len(parts) > 1 and all(p.isalpha() or p.isdigit() or len(p) <= 5 for p in parts):
        return False  # words and version numbers: `user-profile-cache-v2`
    if len(value) == 36 and value.count("-") == 4:
        return False  # a UUID: an id, not a key
    return _entropy(value) >= ENTROPY_BITS


def looks_like_aws_secret(value: str) -> bool:
    """Whether 40 base64 characters found with no key before them look like an AWS secret
    access key: upper case, lower case and digits (a git sha is lower-case hex, base32
    upper case), no run of six lower-case letters (a path or a camel-case name has words;
    a random key has such a run about one time in ten), and random (`looks_random`)."""
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
        return False
    run = 0
    for char in value:
        run = run + 1 if char.islower() else 0
        if run >= 6:
            return False
    return looks_random(value)


# -- assignments, headers, URLs, key blocks ---------------------------------------------------
# The context of a secret rather than its shape: what a name, a header or a URL says.

# Keys end with the keyword, so DB_PASSWORD, GITHUB_TOKEN and client_secret count but
# password_hash, token_url and secret_name (not secrets themselves) do not.
_KEYWORDS = {
    "password": r"pass(?:word|wd|phrase)|pwd",
    "token": r"token",
    "secret": r"secret(?:[_-]?key)?|api[_-]?key",
}
_WORDS = {
    "password": ("pass", "pwd"),
    "token": ("token",),
    "secret": ("secret", "apikey", "api_key", "api-key"),
}
# Shell variables are upper case by convention, and that is what tells them from code.
_ENV_KEYWORDS = {
    "password": r"PASS(?:WORD|WD|PHRASE)|PWD",
    "token": r"TOKEN",
    "secret": r"SECRET(?:_?KEY)?|API_?KEY",
}
# Names that hold a secret or an id alike (`SIGNING_KEY`, `primary_key`, `cache_key`):
# their value counts only when it looks random. A separator or a camel-case hump before
# the word, so that `monkey` and `hotkey` stay out.
_RANDOM_KEYWORD = r"(?:[_.-](?i:key|auth)|[a-z0-9]Key|(?i:credentials?))"
_RANDOM_WORDS = ("key", "auth", "credential")

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
        # `sk-...abcd`, `ghp_…`: shown masked, not the secret.
        rf"(?!{_VC}*?(?:\.\.\.|…))",
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
        rf"(?:{keyword})(?(kq)(?P=kq)\]?)"
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
        (?!{_QCHAR}*?(?:\.\.\.|…))            # sk-...abcd, masked too
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


def _assignments(
    name: str, key: str, words: tuple[str, ...], example: str, check: Check | None = None
) -> list[Kind]:
    """The rows of one family of names: quoted values, unquoted values after `=`, after
    `:` (YAML, headers); an upper-case shell or .env key with no spaces around `=`."""
    family = name if check is None else f"{name} (random values only)"
    key_name, value = example.split("=", 1)
    unquoted_eq = _unquoted(identifiers_are_code=True, needs_digit=False)
    return [
        Kind(name, family, GENERIC, key + _ANNOTATION + _QUOTED_SEP + _QUOTED_VALUE,
             f'{{"{key_name}": "{value}"}}', words=words, check=check, at_name=True),
        # Plain `=` is where code lives (`token = new_token`), so identifiers are code.
        Kind(name, family, GENERIC, key + _EQUALS_SEP + unquoted_eq,
             example.replace("=", " = ", 1), words=words, check=check, at_name=True),
        # Prose uses `Token: see the wiki`, annotations `token: str`: the value must mix
        # letters and digits (a YAML password of letters only is missed, to keep notes).
        Kind(name, family, GENERIC,
             key + _COLON_SEP + _unquoted(identifiers_are_code=True, needs_digit=True),
             example.replace("=", ": ", 1), words=words, check=check, at_name=True),
    ]  # fmt: skip


def _env_assignment(name: str, keyword: str, words: tuple[str, ...], example: str) -> Kind:
    """``DB_PASSWORD=value``: a shell or .env assignment (also ``export X=``, ``docker
    run -e X=``, Dockerfile ``ENV X=``), where a value is always a literal, so even a
    plain word is taken; formatted code puts spaces around `=`."""
    return Kind(
        name,
        name,
        GENERIC,
        rf"(?<![A-Za-z0-9_.-])[A-Z0-9_]*(?:{keyword})="
        + _unquoted(identifiers_are_code=False, needs_digit=False),
        f"EXAMPLE_{name.upper()}={example}",
        words=words,
        at_name=True,
    )


_NAMES = {"password": "db_password", "token": "access_token", "secret": "client_secret"}
_PASSWORD = "Example" + "-pass" + "-2026!"
_RANDOM = _f(32, B64URL)


def _context_kinds() -> tuple[Kind, ...]:
    named = [
        kind
        for name, keyword in _KEYWORDS.items()
        for kind in _assignments(
            name, _key(rf"(?i:{keyword})"), _WORDS[name], f"{_NAMES[name]}={_PASSWORD}"
        )
    ]
    envs = [
        _env_assignment(name, keyword, _WORDS[name], _PASSWORD)
        for name, keyword in _ENV_KEYWORDS.items()
    ]
    random_keys = _assignments(
        "secret", _key(_RANDOM_KEYWORD), _RANDOM_WORDS, f"signingKey={_RANDOM}", looks_random
    )
    return (
        # AWS secrets are 40 base64 characters with no prefix: only the key says what
        # they are.
        Kind("aws-secret-key", "AWS", CLOUD,
             r"""(?i:(?:aws_?)?secret_?access_?key)["'`]?
                 (?:[ \t]*(?::=|=>|[:=])[ \t]*|[ \t]+)["'`]?
                 (?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])""",
             "aws_secret_access_key = " + _f(40, B64), words=("secret",), reach=4),
        # The same 40 characters on their own (`AKIA… wJalr…`, "AWS secret: …"): only a
        # text that names AWS or holds a key id is searched (anywhere in it), and the
        # value must look generated (`looks_like_aws_secret`: not a git sha, a path, a
        # camel-case name); a base64 blob longer than 40 characters is not cut into one.
        Kind("aws-secret-key", "AWS (a secret access key with no name before it)", CLOUD,
             r"(?<![A-Za-z0-9/+=.%\\-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
             "AWS keys: AKIA… and " + "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY",
             words=("aws", "akia", "asia"), check=looks_like_aws_secret, reach=None),
        # The password runs to the last `@` before the host, since people do not escape
        # `@`. A marker cannot be a password: brackets are not password characters here.
        Kind("url-password", "URLs and connection strings (any scheme)", GENERIC,
             r"""(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://
                 [^\s:/@?#"'`<>\[\]]*:
                 (?P<value>(?![${]|%s@|%\(|\*+@)[^\s/?"'`<>\[\]]+)
                 @[^\s/?#@"'`<>]""",
             f"postgres://app:{_PASSWORD}@db.example.com:5432/app", anchors=("://",),
             reach=None),
        # `Authorization: Basic dXNlcjpwYXNz`, `-H "Authorization: Bearer …"`. The scheme
        # is required so that "Authorization: required for all endpoints" stays; the
        # credential must have a digit or an inner capital, which base64 and random
        # tokens have and English words do not.
        Kind("token", "Authorization headers", GENERIC,
             r"""(?i:authorization)["'`]?[ \t]*[:=][ \t]*["'`]?
                 (?i:bearer|basic|token|bot)[ \t]+
                 (?P<value>
                     (?=[A-Za-z0-9._~+/-]{8})
                     (?=[A-Za-z0-9._~+/=-]*?[0-9]|.[A-Za-z0-9._~+/=-]*?[A-Z])
                     [A-Za-z0-9._~+/-]+=*)""",
             "Authorization: Basic " + _f(24, B64) + "==", words=("authoriz",)),
        Kind("token", "Bearer credentials", GENERIC,
             r"""(?<![A-Za-z0-9_-])[Bb]earer[ \t]+
                 (?P<value>
                     (?=[A-Za-z0-9._~+/-]{16})
                     (?=[A-Za-z0-9._~+/=-]*?[0-9]|.[A-Za-z0-9._~+/=-]*?[A-Z])
                     [A-Za-z0-9._~+/-]+=*)""",
             "Bearer " + _f(40, B64URL), words=("bearer",)),
        # The user of the first -u after each `curl` (the gap never crosses another -u: a
        # second pass must not reach past a redacted one to a -u the first pass left).
        Kind("password", "curl -u user:password", GENERIC,
             r"""curl\b(?:(?![ \t](?:-u|--user)[ \t=])[^\n]){0,1000}?[ \t](?:-u|--user)[ \t=]+
                 ["']?[^\s:"'@\[\]]+:
                 (?P<value>(?![$%{*])[^\s"'\[\]]+)""",
             f"curl -u deploy:{_PASSWORD} https://ci.example.com", anchors=("curl",)),
        # `mysql -u root -pS3cret`: the password glued to -p (`-p` alone, or `-p 3306`,
        # makes mysql prompt; `-P` is the port). Not past the end of the command.
        Kind("password", "mysql and mariadb -p", DATABASE,
             r"""(?:mysql|mariadb)[a-z-]*(?:(?![ \t]-p)[^\n;|&]){0,1000}?[ \t]-p
                 ["']?(?P<value>(?![$%{*])[^\s"'\[\];|&]+)""",
             f"mysql -u root -p{_PASSWORD} app", anchors=("mysql", "mariadb")),
        # `token <value>` with no `=` or `:` between: only a value that looks generated,
        # since "token" is an everyday word in prose about auth.
        Kind("token", "the word token or secret before a generated value", GENERIC,
             r"""(?i:token|secret)s?[ \t]+
                 (?P<value>[A-Za-z0-9_~+/-]{20,512}+={0,2}+)(?![A-Za-z0-9_~+/=-]|\.[A-Za-z0-9])""",
             "token " + _f(37), words=("token", "secret"), check=looks_random),
        # Key/value assignments last: the more specific names above win when the value
        # is a recognisable token (`GITHUB_TOKEN=ghp_…` is a github-token).
        *named,
        *envs,
        *random_keys,
    )  # fmt: skip


# The first rows: a key block contains base64 that other patterns would match piecemeal,
# and a JWT is a more precise description than a vendor's name or `Bearer`.
FIRST_KINDS = (
    Kind(
        "private-key",
        "PEM, OpenSSH and PGP private keys",
        GENERIC,
        # An unterminated block runs to the end of the text.
        r"""-----BEGIN[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----
            .*?
            (?:-----END[ A-Z0-9]*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----|\Z)""",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + "\n".join(_f(70, B64) for _ in range(3))
        + "\n-----END OPENSSH PRIVATE KEY-----",
        anchors=("-----BEGIN",),
        flags=re.DOTALL,
    ),
    # Header (base64 of `{"`), payload, signature; a JWE has five parts (the second, an
    # encrypted key, is not JSON, and may be empty).
    Kind(
        "jwt",
        "JSON Web Tokens (JWS and JWE)",
        GENERIC,
        # Some libraries leave the base64 padding on (`eyJ...==.eyJ...=.sig`).
        r"""(?<![A-Za-z0-9_.-])eyJ[A-Za-z0-9_-]{8,}={0,2}\.
            (?:(?:[A-Za-z0-9_-]*={0,2}\.){3}[A-Za-z0-9_-]*={0,2}   # JWE
              | [A-Za-z0-9_-]{2,}={0,2}\.[A-Za-z0-9_-]*={0,2})""",  # JWS
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJFWEFNUExFIn0." + _f(43, B64URL),
        anchors=("eyJ",),
    ),
)

CONTEXT_KINDS: tuple[Kind, ...] = _context_kinds()
