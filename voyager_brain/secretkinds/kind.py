"""A row of the table (:class:`Kind`), its categories, and how examples are made up."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Check = Callable[[str], bool]


class Kind:
    """One kind of secret. ``pattern`` is a verbose regex; the secret is its group named
    ``value`` if there is one, else the whole match. ``anchors`` (case-sensitive) or
    ``words`` (lower case, matched against the lower-cased text): a match always holds
    one of them (with ``reach`` None, the text does: the row is searched only in a text
    that holds one); a row with neither is found by its own regex. ``at_name``: a match
    starts where a name holding one of the words starts (or at the quote before it),
    so the redactor tries the regex there only, not at every character. ``reach``:
    how many characters before its anchor (or word) a match may start, 0 when every
    match starts with one; the redactor tries the regex only there. None: anywhere.

    ``check``, when given, decides on the secret found (`looks_random`)."""

    __slots__ = (
        "anchors",
        "at_name",
        "category",
        "check",
        "example",
        "flags",
        "name",
        "pattern",
        "provider",
        "reach",
        "words",
    )

    def __init__(
        self,
        name: str,
        provider: str,
        category: str,
        pattern: str,
        example: str,
        *,
        anchors: tuple[str, ...] = (),
        words: tuple[str, ...] = (),
        flags: int = 0,
        check: Check | None = None,
        at_name: bool = False,
        reach: int | None = 0,
    ) -> None:
        self.name, self.provider, self.category = name, provider, category
        self.pattern, self.example, self.flags, self.check = pattern, example, flags, check
        self.anchors, self.words, self.at_name, self.reach = anchors, words, at_name, reach

    def __repr__(self) -> str:
        return f"Kind({self.name!r}, {self.provider!r})"


# -- obviously fake, real-shaped examples ------------------------------------------------

# Spelt out: importing `string` costs a hook most of a millisecond.
DIGITS = "0123456789"
_UPPERCASE = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
HEX = "0123456789abcdef"
UHEX = "0123456789ABCDEF"
ALNUM = DIGITS + _UPPERCASE + _UPPERCASE.lower()
UPPER = DIGITS + _UPPERCASE
LOWER = DIGITS + _UPPERCASE.lower()
B64 = ALNUM + "+/"
B64URL = ALNUM + "_-"


def fake(length: int, alphabet: str = ALNUM) -> str:
    """`length` characters of `alphabet`: EXAMPLE where the alphabet allows, then the
    alphabet in order, over and over. Never a real credential, always the right shape."""
    head = "EXAMPLE" if set("EXAMPLE") <= set(alphabet) else ""
    body = head + alphabet * (length // len(alphabet) + 1)
    return body[:length]


def fake_uuid() -> str:
    return "01234567-89ab-cdef-0123-456789abcdef"


# -- categories ----------------------------------------------------------------------------

CLOUD = "cloud"
HOSTING = "source hosting and CI"
REGISTRY = "package registry"
PAYMENT = "payment and commerce"
MESSAGING = "messaging"
EMAIL = "email"
OBSERVABILITY = "observability"
AI = "AI model API"
DATABASE = "database"
SECRETS = "secrets management"
SAAS = "productivity and SaaS"
GENERIC = "any provider"

CATEGORIES = (AI, CLOUD, HOSTING, REGISTRY, PAYMENT, MESSAGING, EMAIL, OBSERVABILITY, DATABASE,
              SECRETS, SAAS, GENERIC)  # fmt: skip
