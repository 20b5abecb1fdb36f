"""Every kind of secret redaction recognises, one row each: what it is and what it looks like.

A row (:class:`Kind`) holds a name (the ``<name>`` of ``[REDACTED:<name>]``), the provider
and its category, the regex, the literal strings every match contains (``anchors``, or
case-insensitive ``words``: text with none of them skips the row, and the tool-call hook
never compiles the table for ordinary text) and an example. Adding a kind is one line of
:data:`PROVIDER_KINDS`; `docs/secrets.md` is generated from the rows and the tests build
their secret corpus from the examples.

Provider formats are written from the providers' documented prefixes, lengths and
alphabets. Examples are obviously fake (``EXAMPLE`` and the alphabet in order) yet have
the real shape; they are built when the module loads, so the source holds nothing a
secret scanner would flag.

Values assigned to a name ending in ``key``, ``auth`` or ``credential`` (``SIGNING_KEY``,
``accountKey``, ``_auth``) are secrets only when they look random, see
:func:`looks_random`; values of ``*password``, ``*token`` and ``*secret`` names are
secrets whatever they look like, since the name says so (``password = "hunter2"``).

Standard library only, no regex compiled here: :mod:`voyager_brain.redact` compiles the
rows on first use.
"""

from __future__ import annotations

from .context import CONTEXT_KINDS, ENTROPY_BITS, FIRST_KINDS, looks_random
from .kind import CATEGORIES, Kind
from .providers import PROVIDER_KINDS

__all__ = [
    "ALL_KINDS",
    "CATEGORIES",
    "CONTEXT_KINDS",
    "ENTROPY_BITS",
    "FIRST_KINDS",
    "PROVIDER_KINDS",
    "Kind",
    "looks_random",
]

#: Every kind, in the order they are tried: key blocks and JWTs, the providers, then
#: what context says (headers, URLs, names).
ALL_KINDS: tuple[Kind, ...] = (*FIRST_KINDS, *PROVIDER_KINDS, *CONTEXT_KINDS)
