"""The value classes the hooks create: frozen, compared and hashed by their fields,
copied and pickled whole, and checked again when `replace` changes them."""

from __future__ import annotations

import copy
import pickle
from datetime import UTC, datetime, timedelta, timezone

import pytest

from voyager_brain.config import Config
from voyager_brain.errors import InvalidEntryError
from voyager_brain.session.brainfile import BrainDocument
from voyager_brain.session.model import BrainEntry
from voyager_brain.state.brainjson import Change

T = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)


def test_an_entry_is_compared_and_hashed_by_its_fields() -> None:
    a = BrainEntry("decision", "Use PostgreSQL", T, "agent")
    same = BrainEntry(type="decision", content="Use PostgreSQL\n\n", timestamp=T, source=" agent ")
    assert a == same and hash(a) == hash(same) and len({a, same}) == 1
    for other in (
        BrainEntry("observation", "Use PostgreSQL", T, "agent"),
        BrainEntry("decision", "Use MySQL", T, "agent"),
        BrainEntry("decision", "Use PostgreSQL", T + timedelta(seconds=1), "agent"),
        BrainEntry("decision", "Use PostgreSQL", T, None),
    ):
        assert a != other
    assert a != ("decision", "Use PostgreSQL", T, "agent")
    assert a.key == ("decision", "2026-03-21T14:30:00Z", "Use PostgreSQL")


def test_an_entry_cannot_be_changed_in_place() -> None:
    entry = BrainEntry("observation", "x", T)
    with pytest.raises(AttributeError, match="immutable"):
        entry.content = "y"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del entry.source
    with pytest.raises(AttributeError):
        entry.extra = 1  # type: ignore[attr-defined]
    assert entry.content == "x"


def test_replace_checks_and_normalizes_like_a_new_entry() -> None:
    entry = BrainEntry("observation", "x", T)
    moved = entry.replace(
        timestamp=datetime(2026, 3, 21, 16, 30, 5, 900, tzinfo=timezone(timedelta(hours=2)))
    )
    assert moved.timestamp == datetime(2026, 3, 21, 14, 30, 5, tzinfo=UTC)
    assert moved.key == ("observation", "2026-03-21T14:30:05Z", "x")
    assert entry.timestamp == T  # the original is untouched
    with pytest.raises(InvalidEntryError, match="entry type"):
        entry.replace(type="note")
    with pytest.raises(InvalidEntryError, match="entry source"):
        entry.replace(source="two\nlines")


def test_an_entry_copies_and_pickles_whole() -> None:
    entry = BrainEntry("reflection", "Summary\nof three entries", T, "compact")
    for twin in (copy.copy(entry), copy.deepcopy(entry), pickle.loads(pickle.dumps(entry))):
        assert twin == entry and twin.key == entry.key and twin.source == "compact"


def test_an_entry_reads_like_the_dataclass_it_was() -> None:
    entry = BrainEntry("decision", "Use Zod", T)
    assert repr(entry) == (
        "BrainEntry(type='decision', content='Use Zod', "
        "timestamp=datetime.datetime(2026, 3, 21, 14, 30, tzinfo=datetime.timezone.utc), "
        "source=None)"
    )
    match entry:
        case BrainEntry("decision", text, when, None):
            assert (text, when) == ("Use Zod", T)
        case _:
            pytest.fail("positional pattern did not match")


def test_a_change_ignores_its_item_when_compared() -> None:
    change = Change("add", "decisions", None, {"what": "Use Zod"}, "Use Zod")
    assert change == Change("add", "decisions", None, {"what": "Use Zod"})
    assert change != Change("remove", "decisions", {"what": "Use Zod"}, None, "Use Zod")
    assert "item='Use Zod'" in repr(change)
    assert change.replace(op="remove").item == "Use Zod"


def test_a_document_normalizes_its_preamble_and_holds_a_dict() -> None:
    doc = BrainDocument("p", preamble="\r\nNotes\r\n\n")
    assert doc.preamble == "Notes" and doc.meta == {} and doc.appendable
    assert doc == BrainDocument("p", {}, (), "Notes") != BrainDocument("q")
    assert doc.replace(preamble="").preamble is None
    with pytest.raises(TypeError):
        hash(doc)  # its front matter is a dict


def test_config_defaults_and_replace() -> None:
    config = Config()
    assert config.prompt_budget == 2000 and config.compact_budget_chars == 16000
    changed = config._replace(prompt_budget=500)
    assert changed.prompt_budget == 500 and config.prompt_budget == 2000
    assert changed != config and Config(prompt_budget=500) == changed


def test_a_record_is_the_namedtuple_its_class_body_describes() -> None:
    from voyager_brain.value import Record

    class Span(Record):
        """Where a piece of text is."""

        start: int
        end: int = 0
        label: str = "x"

        @property
        def size(self) -> int:
            return self.end - self.start

        def shifted(self, by: int) -> Span:
            return self._replace(start=self.start + by, end=self.end + by)

    span = Span(2, 5)
    assert span == (2, 5, "x") and span.size == 3 and isinstance(span, tuple)
    assert Span._fields == ("start", "end", "label") and Span(1).end == 0
    assert span.shifted(10) == Span(12, 15) and span._asdict()["label"] == "x"
    assert (
        repr(span) == "Span(start=2, end=5, label='x')"
        and Span.__doc__ == "Where a piece of text is."
    )
    assert Span.__module__ == __name__ and "Span" in Span.__qualname__
    with pytest.raises(AttributeError):
        span.start = 3  # type: ignore[misc]
    start, end, label = span
    assert (start, end, label) == (2, 5, "x")


def test_records_pickle_by_their_fields() -> None:
    from voyager_brain.memory.log import Health

    health = Health(10, 1, True)
    assert pickle.loads(pickle.dumps(health)) == health and copy.deepcopy(health) == health
