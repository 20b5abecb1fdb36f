"""Prohibitions in English: what a user's correction or a memory entry forbids, and
the shell command it names ("no, use uv add, never pip install" forbids ``pip install``,
with ``uv add`` as the way out).

`findings` reads the sentences and clauses of a text ("never / don't / avoid / stop X",
"use Y instead of X", "instead of X, use Y", "use Y, not X", "prefer Y over X", and a bare
"no, use Y" after a shell command); `command_of` tells a shell command from other words
(a known program, or a command in backticks); `command_pattern` turns one into a regex.
Used by `suggest`, which turns findings into proposed rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..value import Record

#: A clause longer than this is prose, not a correction (and keeps the regexes cheap).
MAX_CLAUSE = 300

# -- commands ---------------------------------------------------------------------------

# Blocks of words read (and diff) better than a hundred quoted strings.
# ruff: noqa: SIM905

#: Programs whose name in a sentence means the shell command. Words that are plain English
#: too (make, find, go, kill, touch ...) count only in backticks, and so do the shells
#: ("use fish syntax, not bash" is not about running bash).
PROGRAMS = frozenset(
    """
    pip pip3 pipx npm npx yarn pnpm bun deno node uv uvx poetry pipenv conda mamba python
    python3 pytest tox nox git gh rm rmdir mv cp chmod chown sudo curl wget docker
    docker-compose podman kubectl helm terraform cmake cargo rustup gofmt brew apt apt-get
    dnf yum pacman snap gem bundle rake mvn gradle dotnet composer ssh scp rsync dd mkfs
    pkill killall shutdown reboot psql mysql sqlite3 mongosh redis-cli aws gcloud az black
    isort flake8 pylint ruff mypy eslint prettier tsc jest vitest sed awk xargs tar unzip
    heroku vercel netlify firebase flyctl supabase alembic django-admin rails
    """.split()
)
#: Programs that run another one: "no, use uv run" after ``python -m pip install x`` does
#: not forbid python.
RUNNERS = frozenset("python python3 sudo npx uvx env bash sh time".split())
#: Words that end a command in a sentence ("never use npm in this repo"); never a
#: subcommand.
STOP = frozenset(
    """
    a an the in on to for from with without when while because anymore again here there
    unless or and but please ever instead since it this that these those as if so then at
    by of any anything now directly locally globally yourself manually hand first
    """.split()
)
#: Words before the forbidden thing that say how, not what ("never run X", "stop using X").
LEAD = frozenset(
    "use using run running call calling do doing type typing execute executing ever try "
    "trying just again invoke invoking the".split()
)
_LEAD = re.compile("(?:(?:" + "|".join(sorted(LEAD)) + r")\s+)+", re.I)
_RUN_VERBS = frozenset("run running execute executing type typing invoke invoking".split())
#: Words after "don't" that are conversation, not a prohibition ("don't worry about it").
_CHAT = frozenset(
    "worry know think forget mind care understand remember see get have need want like "
    "bother hesitate be feel wait apologize apologise mean believe it that this them".split()
)
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9-]*")
_ARGUMENT = re.compile(r"-{1,2}[A-Za-z0-9][\w=.-]*|[\w.~*-]*/[\w./~*-]*|\.|[\w-]+\.[A-Za-z]\w*")
_SPAN = re.compile(r"`([^`\n]+)`")
_MASK = re.compile("\ue000(\\d+)\ue001")
_PUNCTUATION = ",.;:!?)\"'"


def _mask(text: str) -> tuple[str, list[str]]:
    """`text` with every `code span` replaced by a placeholder without spaces or
    punctuation, so that splitting sentences and clauses never cuts through one
    (`_unmask` puts them back)."""
    spans: list[str] = _SPAN.findall(text)
    numbers = iter(range(len(spans)))
    return _SPAN.sub(lambda m: f"\ue000{next(numbers)}\ue001", text), spans


def _unmask(text: str, spans: Sequence[str]) -> str:
    return _MASK.sub(lambda m: f"`{spans[int(m[1])]}`" if int(m[1]) < len(spans) else m[0], text)


def command_of(phrase: str) -> str | None:
    """The shell command `phrase` names ("use npm in this repo" -> "npm", "run `rm -rf
    /` here" -> "rm -rf /"), or None when it names something else."""
    lead = _LEAD.match(phrase)
    rest = phrase[lead.end() :] if lead else phrase
    span = _SPAN.match(rest)
    if span is not None:
        code = " ".join(span[1].split())
        first = code.split()[0] if code else ""
        run = lead is not None and bool(_RUN_VERBS & set(lead[0].lower().split()))
        known = first in PROGRAMS or first in RUNNERS or "/" in first or run
        return code if known and re.search(r"\w", code) else None
    words = rest.split()
    program = words[0].rstrip(_PUNCTUATION) if words else ""
    if program not in PROGRAMS and not program.startswith(("./", "~/")):
        return None
    taken = [program]
    for n, word in enumerate(words[1:5]):
        token = word.rstrip(_PUNCTUATION.replace(".", ""))
        token = token if token in (".", "..") else token.rstrip(".")
        subcommand = n == 0 and _SUBCOMMAND.fullmatch(token) and token not in STOP
        if not (subcommand or _ARGUMENT.fullmatch(token)):
            break
        taken.append(token)
        if token != word:  # punctuation after it ends the command
            break
    return " ".join(taken)


def command_pattern(command: str) -> str:
    """A regex finding `command` in a shell command line: its words in order, any
    whitespace between them, not inside a longer word (``pip`` is not ``pipx``, and
    ``--force`` is not ``--force-with-lease``)."""
    words = command.split()
    body = r"\s+".join(re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", w) for w in words)
    start = r"\b" if re.match(r"\w", command) else ""
    if not re.search(r"\w$", command):
        end = ""
    else:
        # Not a look-ahead, (?![\w-]): the same calls, and RE2 runs it (guard/patterns.py).
        end = r"(?:[^\w-]|$)" if words[-1].startswith("-") else r"\b"
    return start + body + end


def head_of(command_line: str) -> str | None:
    """The program and subcommand of the first command in a shell line with a known
    program, not a runner ("cd x && pip install y" -> "pip install")."""
    for part in re.split(r"&&|\|\||[;|\n]", command_line):
        words = [w for w in part.split() if not re.fullmatch(r"[A-Za-z_]\w*=\S*", w)]
        if words and words[0] in PROGRAMS and words[0] not in RUNNERS:
            sub = words[1:2] if words[1:2] and _SUBCOMMAND.fullmatch(words[1]) else []
            return " ".join(words[:1] + [w for w in sub if w not in STOP])
    return None


# -- prohibitions in English ---------------------------------------------------------------


class Finding(Record):
    """Something a text forbids: the shell `command` (None: something else), the
    `sentence` and the `clause` saying so, and what to do instead."""

    command: str | None
    sentence: str
    clause: str
    alternative: str | None


_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
# Commas split clauses, but not before "not X" ("use pytest, not unittest" is one thought).
_CLAUSES = re.compile(
    r"\s*(?:[;:]\s+|,\s+(?!not\b)|\s[-–—]+\s|\bbut\s+|\band\s+(?=(?:never|don't|do not|use)\b))",
    re.I,
)
_PREFIX = r"^(?:(?:please|so|and|also|just|ok|okay|you|we|should|must|shall|will|to)\s+)*"
PROHIBIT = re.compile(
    _PREFIX + r"(?:never|don't|dont|do not|avoid|stop|quit|no longer|must not|mustn't"
    r"|should not|shouldn't|instead of|rather than)\s+(?P<x>.+)$",
    re.I,
)
_INSTEAD = re.compile(
    _PREFIX + r"(?:always\s+)?(?:use|run|try|prefer|call)?\s*(?P<y>.+?)\s+"
    r"(?:instead of|rather than|in place of)\s+(?P<x>.+)$",
    re.I,
)
_NOT = re.compile(r"\b(?:use|uses|using)\s+(?P<y>.+?),?\s+not\s+(?P<x>.+)$", re.I)
_OVER = re.compile(r"\bprefers?\s+(?P<y>.+?)\s+(?:over|to)\s+(?P<x>.+)$", re.I)
_USE = re.compile(_PREFIX + r"(?:always\s+)?(?:use|run|try)\s+(?P<y>.+)$", re.I)
_NO = re.compile(r"^\W*(?:no|nope|wrong)\b\W*", re.I)
_CORRECTION = re.compile(r"^\W*(?:no|nope|wrong|not that|instead|don't)\b", re.I)


def _trim(phrase: str) -> str:
    phrase = phrase.strip().rstrip(_PUNCTUATION).strip()
    return re.sub(r"\s+instead$", "", phrase, flags=re.I)


def findings(text: str, previous_command: str | None = None) -> list[Finding]:
    """What `text` forbids, in order (the phrasings are in the module's docstring).
    `previous_command`: the shell command a bare "no, use Y" corrects."""
    masked, spans = _mask(text.replace("\u2019", "'"))
    # (what is forbidden, its clause, the alternative the clause names) by sentence, and
    # the first "use Y" of each sentence
    sentences: list[tuple[str, list[tuple[str, str, str | None]], str | None]] = []
    for sentence in _SENTENCES.split(masked):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue  # a question asks, it does not correct
        pairs: list[tuple[str, str, str | None]] = []
        alternative: str | None = None
        for clause in _CLAUSES.split(sentence):
            clause = _unmask(clause.strip(" \t\"'()"), spans)
            if not clause or len(clause) > MAX_CLAUSE:
                continue
            m = _INSTEAD.match(clause) or _NOT.search(clause) or _OVER.search(clause)
            if m is not None:
                pairs.append((m["x"], clause, _trim(m["y"])))
            elif m := PROHIBIT.match(clause):
                pairs.append((m["x"], clause, None))
            elif (m := _USE.match(_NO.sub("", clause))) and alternative is None:
                alternative = _trim(m["y"])
        sentences.append((_unmask(sentence, spans), pairs, alternative))
    # "Never pip install. Use uv add.": a "use Y" anywhere in the message is the way out
    # of a command whose own sentence names none...
    anywhere = next((alt for _, _, alt in sentences if alt), None)
    found: list[Finding] = []
    # ... unless the message opens by correcting the agent's last command ("No, use uv
    # add"): then that "use Y" replaces that command, and no other.
    if anywhere and previous_command and _CORRECTION.match(masked):
        head = head_of(previous_command)
        use = command_of(anywhere) or anywhere
        if head is not None and use.split()[0] != head.split()[0]:
            found.append(Finding(head, sentences[0][0], sentences[0][0], anywhere))
            anywhere = None
    for sentence, pairs, alternative in sentences:
        for phrase, clause, instead in pairs:
            phrase, nearby = _trim(phrase), alternative or anywhere
            command = command_of(phrase)
            words = [w for w in phrase.lower().split() if w not in LEAD]
            if command is not None:
                if found and found[0].command == command and found[0].alternative == nearby:
                    continue  # "No, use uv add, never pip install" after a pip install
                found.append(Finding(command, sentence, clause, instead or nearby))
            # "stop it", "don't worry about the tests": talk, not a rule. A "use Y" nearby
            # is the way out of a command; of anything else only "Y instead of X" says so.
            elif words and (instead or (len(words) > 1 and words[0] not in _CHAT)):
                found.append(Finding(None, sentence, clause, instead))
    return found
