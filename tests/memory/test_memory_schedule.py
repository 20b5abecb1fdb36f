"""memory.schedule: tasks and reminders from seed 001 — tags, cadences, due times, filters.

Every clock is fixed and every zone explicit: UTC, fixed offsets, and America/Chicago for
the DST crossings (run only where the machine has the tz database).
"""

from __future__ import annotations

import contextlib
import copy
import json
import time as time_module
import zoneinfo
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain.errors import BrainError
from voyager_brain.memory.schedule import (
    PRIORITIES,
    RESULTS,
    TASK_STATUSES,
    complete_task,
    interval_seconds,
    is_due,
    is_overdue,
    iso_ms,
    matches_filter,
    next_due,
    normalize_tags,
    parse_cadence,
    parse_time,
    record_run,
)

HAS_TZDATA = "America/Chicago" in zoneinfo.available_timezones()
needs_tzdata = pytest.mark.skipif(
    not HAS_TZDATA, reason="the IANA tz database (America/Chicago) is not installed here"
)
CHICAGO: tzinfo | None = zoneinfo.ZoneInfo("America/Chicago") if HAS_TZDATA else None

IST = timezone(timedelta(hours=5, minutes=30))
PST = timezone(timedelta(hours=-8))

# The seed's examples, verbatim.
SEED_TASK: dict[str, Any] = {
    "id": "t-abc123",
    "type": "task",
    "description": "Fix the flaky test in CI",
    "status": "pending",
    "priority": "high",
    "due": "2026-02-15",
    "tags": ["code", "ci"],
    "completedAt": None,
    "created": "2026-02-10T00:00:00.000Z",
}
SEED_REMINDER: dict[str, Any] = {
    "id": "rem00001",
    "type": "reminder",
    "text": "Run backup script",
    "cadence": {"kind": "interval", "every": "6h"},
    "enabled": True,
    "priority": "normal",
    "tags": [],
    "last_run": None,
    "next_due": None,
    "last_result": None,
    "last_error": None,
    "created": "2026-02-01T00:00:00.000Z",
}


def utc(
    year: int,
    month: int,
    day: int,
    hour: int = 0,
    minute: int = 0,
    second: int = 0,
    microsecond: int = 0,
) -> datetime:
    return datetime(year, month, day, hour, minute, second, microsecond, tzinfo=UTC)


def chicago() -> tzinfo:
    assert CHICAGO is not None
    return CHICAGO


def reminder(**changes: Any) -> dict[str, Any]:
    return {**copy.deepcopy(SEED_REMINDER), **changes}


def task(**changes: Any) -> dict[str, Any]:
    return {**copy.deepcopy(SEED_TASK), **changes}


# --- constants ---------------------------------------------------------------------------


def test_the_vocabularies_are_the_seeds() -> None:
    assert PRIORITIES == ("urgent", "high", "normal", "low")
    assert TASK_STATUSES == ("pending", "done")
    assert RESULTS == ("ok", "error", "skipped")


# --- tags ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given_value", "expected"),
    [
        pytest.param("code,ci", ["code", "ci"], id="seed-tags=code,ci"),
        pytest.param("code, CI,,code", ["code", "ci"], id="spaces-case-empties-repeats"),
        pytest.param(["Code", "ci"], ["code", "ci"], id="list"),
        pytest.param([" Code ", "code", ""], ["code"], id="list-with-repeats-and-empty"),
        pytest.param(["code,ci", "docs"], ["code", "ci", "docs"], id="list-item-with-commas"),
        pytest.param("", [], id="empty-string"),
        pytest.param(" , ,", [], id="only-separators"),
        pytest.param(None, [], id="none"),
        pytest.param([], [], id="empty-list"),
        pytest.param("ci,code", ["ci", "code"], id="order-kept"),
    ],
)
def test_normalize_tags(given_value: str | list[str] | None, expected: list[str]) -> None:
    assert normalize_tags(given_value) == expected


@pytest.mark.parametrize("bad", [42, ["code", 3], {"code": True}])
def test_normalize_tags_rejects_non_strings(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"^tags: expected"):
        normalize_tags(bad)


tag_text = st.text(alphabet=st.sampled_from("abcXYZ ,-_é\t"), max_size=30)


@given(st.one_of(tag_text, st.lists(tag_text, max_size=6)))
def test_normalize_tags_is_idempotent(value: str | list[str]) -> None:
    once = normalize_tags(value)
    assert normalize_tags(once) == once
    assert normalize_tags(",".join(once)) == once
    assert len(set(once)) == len(once)
    assert all(tag and tag == tag.strip().lower() and "," not in tag for tag in once)


# --- cadence -------------------------------------------------------------------------------

INTERVAL_6H = {"kind": "interval", "every": "6h"}
DAILY_8 = {"kind": "daily", "at": "08:00"}


@pytest.mark.parametrize(
    ("given_value", "expected"),
    [
        pytest.param(INTERVAL_6H, INTERVAL_6H, id="seed-dict"),
        pytest.param('{"kind":"interval","every":"6h"}', INTERVAL_6H, id="seed-json"),
        pytest.param("{kind:interval,every:6h}", INTERVAL_6H, id="seed-relaxed-no-quotes"),
        pytest.param("{ kind: interval, every: 6h }", INTERVAL_6H, id="relaxed-with-spaces"),
        pytest.param("{'kind':'interval','every':'6h'}", INTERVAL_6H, id="relaxed-single-quotes"),
        pytest.param("6h", INTERVAL_6H, id="shorthand"),
        pytest.param("every 6h", INTERVAL_6H, id="every-shorthand"),
        pytest.param("Every 6H", INTERVAL_6H, id="shorthand-any-case"),
        pytest.param("6 h", INTERVAL_6H, id="space-before-unit"),
        pytest.param({"kind": "interval", "every": "06h"}, INTERVAL_6H, id="leading-zero"),
        pytest.param({"kind": "Interval", "every": "6h"}, INTERVAL_6H, id="kind-any-case"),
        pytest.param("{kind:interval,every:2h}", {"kind": "interval", "every": "2h"}, id="2h"),
        pytest.param("90m", {"kind": "interval", "every": "90m"}, id="minutes"),
        pytest.param("every 1d", {"kind": "interval", "every": "1d"}, id="days"),
        pytest.param(DAILY_8, DAILY_8, id="seed-daily-dict"),
        pytest.param('{"kind":"daily","at":"08:00"}', DAILY_8, id="daily-json"),
        pytest.param("{kind:daily,at:08:00}", DAILY_8, id="daily-relaxed-colon-in-value"),
        pytest.param("daily 08:00", DAILY_8, id="daily-shorthand"),
        pytest.param("daily@08:00", DAILY_8, id="daily-at-sign"),
        pytest.param("daily @ 8:00", DAILY_8, id="daily-at-sign-spaces-unpadded"),
        pytest.param("daily at 08:00", DAILY_8, id="daily-at-word"),
        pytest.param({"kind": "daily", "at": "8:00"}, DAILY_8, id="hour-padded"),
        pytest.param("daily 23:59", {"kind": "daily", "at": "23:59"}, id="last-minute"),
        pytest.param("daily 0:00", {"kind": "daily", "at": "00:00"}, id="midnight"),
    ],
)
def test_parse_cadence(given_value: str | dict[str, Any], expected: dict[str, str]) -> None:
    parsed = parse_cadence(given_value)
    assert parsed == expected
    assert list(parsed) == list(expected)  # canonical key order
    assert parse_cadence(parsed) == parsed


def test_parse_cadence_leaves_its_input_alone() -> None:
    value = {"kind": "interval", "every": "06h"}
    parse_cadence(value)
    assert value == {"kind": "interval", "every": "06h"}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        pytest.param(
            "6x",
            r'^cadence\.every: expected a number and a unit m, h or d, like "6h", '
            r"got '6x'$",
            id="unknown-unit",
        ),
        pytest.param({"kind": "interval", "every": "6x"}, r"^cadence\.every: .*'6x'", id="dict-6x"),
        pytest.param("{kind:interval,every:6x}", r"^cadence\.every: ", id="relaxed-6x"),
        pytest.param("0h", r"^cadence\.every: expected a positive number", id="zero"),
        pytest.param({"kind": "interval", "every": 6}, r"^cadence\.every: ", id="number-no-unit"),
        pytest.param({"kind": "interval", "every": "-6h"}, r"^cadence\.every: ", id="negative"),
        pytest.param({"kind": "interval", "every": "1.5h"}, r"^cadence\.every: ", id="fraction"),
        pytest.param({"kind": "interval"}, r"^cadence\.every: required", id="missing-every"),
        pytest.param(
            {"kind": "daily", "at": "24:00"},
            r"^cadence\.at: expected a local time "
            r'HH:MM, like "08:00"',
            id="hour-24",
        ),
        pytest.param("daily 08:60", r"^cadence\.at: ", id="minute-60"),
        pytest.param("daily 8am", r"^cadence\.at: ", id="am-pm"),
        pytest.param({"kind": "daily", "at": "08:00:00"}, r"^cadence\.at: ", id="with-seconds"),
        pytest.param({"kind": "daily"}, r"^cadence\.at: required", id="missing-at"),
        pytest.param(
            {"kind": "weekly", "at": "08:00"},
            r"^cadence\.kind: expected interval or "
            r"daily, got 'weekly'",
            id="unknown-kind",
        ),
        pytest.param({"every": "6h"}, r"^cadence\.kind: ", id="missing-kind"),
        pytest.param(
            {"kind": "interval", "every": "6h", "at": "08:00"},
            r"^cadence: a interval cadence has only the keys kind and every, got at",
            id="extra-key",
        ),
        pytest.param("{kind:interval,kind:daily}", r"^cadence: expected ", id="repeated-key"),
        pytest.param("{kind interval}", r"^cadence: expected ", id="relaxed-without-colon"),
        pytest.param("[1, 2]", r"^cadence: expected ", id="json-list"),
        pytest.param("sometimes", r"^cadence: expected ", id="prose"),
        pytest.param("", r"^cadence: expected ", id="empty"),
        pytest.param(42, r"^cadence: expected ", id="not-a-string"),
    ],
)
def test_parse_cadence_rejects(bad: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        parse_cadence(bad)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, BrainError)  # the CLI reports it, not a traceback


@pytest.mark.parametrize(
    ("every", "seconds"),
    [("6h", 6 * 3600), ("2h", 7200), ("90m", 5400), ("1d", 86400), ("06h", 21600), ("1m", 60)],
)
def test_interval_seconds(every: str, seconds: int) -> None:
    assert interval_seconds(every) == seconds


def test_interval_seconds_rejects_a_bad_unit() -> None:
    with pytest.raises(ValueError, match=r"^cadence\.every: .*got '6x'$"):
        interval_seconds("6x")


units = st.sampled_from("mhdMHD")
every_text = st.builds(
    lambda count, pad, space, unit: "0" * pad + str(count) + space + unit,
    st.integers(1, 10_000),
    st.integers(0, 2),
    st.sampled_from(["", " "]),
    units,
)
at_text = st.builds(
    lambda hour, minute, pad: (f"{hour:02d}" if pad else str(hour)) + f":{minute:02d}",
    st.integers(0, 23),
    st.integers(0, 59),
    st.booleans(),
)
cadence_inputs = st.one_of(
    every_text,
    every_text.map(lambda every: f"every {every}"),
    every_text.map(lambda every: f"{{kind:interval,every:{every}}}"),
    every_text.map(lambda every: json.dumps({"kind": "interval", "every": every})),
    every_text.map(lambda every: {"kind": "interval", "every": every}),
    at_text.map(lambda at: f"daily {at}"),
    at_text.map(lambda at: f"daily@{at}"),
    at_text.map(lambda at: f"{{kind:daily,at:{at}}}"),
    at_text.map(lambda at: json.dumps({"kind": "daily", "at": at})),
    at_text.map(lambda at: {"kind": "daily", "at": at}),
)


@given(cadence_inputs)
def test_parse_cadence_is_idempotent(value: str | dict[str, Any]) -> None:
    once = parse_cadence(value)
    assert parse_cadence(once) == once
    assert parse_cadence(json.dumps(once)) == once


@given(st.text(max_size=40))
def test_parse_cadence_either_reads_or_raises_value_error(value: str) -> None:
    try:
        once = parse_cadence(value)
    except ValueError as error:
        assert "\n" not in str(error)
    else:
        assert parse_cadence(once) == once


# --- time formats ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        pytest.param(utc(2026, 2, 10), "2026-02-10T00:00:00.000Z", id="seed-created"),
        pytest.param(utc(2026, 2, 1, 6), "2026-02-01T06:00:00.000Z", id="seed-next-due"),
        pytest.param(
            datetime(2026, 2, 1, 11, 30, tzinfo=IST),
            "2026-02-01T06:00:00.000Z",
            id="offset-converted",
        ),
        pytest.param(
            utc(2026, 2, 1, 6, 0, 0, 123_999), "2026-02-01T06:00:00.123Z", id="truncated-to-ms"
        ),
        pytest.param(
            utc(2026, 12, 31, 23, 59, 59, 999_999),
            "2026-12-31T23:59:59.999Z",
            id="never-rounds-into-next-year",
        ),
    ],
)
def test_iso_ms(moment: datetime, text: str) -> None:
    assert iso_ms(moment) == text


def test_iso_ms_rejects_naive_datetimes() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        iso_ms(datetime(2026, 2, 10))


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        pytest.param("2026-02-10T00:00:00.000Z", utc(2026, 2, 10), id="seed"),
        pytest.param("2026-02-10T00:00:00Z", utc(2026, 2, 10), id="no-ms"),
        pytest.param("2026-02-10T05:30:00+05:30", utc(2026, 2, 10), id="offset"),
        pytest.param("2026-02-09T18:00:00-06:00", utc(2026, 2, 10), id="negative-offset"),
        pytest.param("2026-02-10", utc(2026, 2, 10), id="bare-date-is-midnight-utc"),
        pytest.param("2026-02-10T00:00:00", utc(2026, 2, 10), id="no-offset-is-utc"),
        pytest.param(" 2026-02-10T00:00:00.250Z ", utc(2026, 2, 10, 0, 0, 0, 250_000), id="ms"),
    ],
)
def test_parse_time(text: str, moment: datetime) -> None:
    parsed = parse_time(text)
    assert parsed == moment
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize("bad", ["", "yesterday", "2026-13-01", "2026-02-30", "20260210", "26-2-1"])
def test_parse_time_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match=r"^time: expected an ISO 8601 time"):
        parse_time(bad)


@given(
    st.datetimes(
        min_value=datetime(1970, 1, 1),
        max_value=datetime(2999, 1, 1),
        timezones=st.sampled_from([UTC, IST, PST]),
    )
)
def test_iso_ms_round_trips_to_the_millisecond(moment: datetime) -> None:
    text = iso_ms(moment)
    assert len(text) == 24 and text.endswith("Z")
    back = parse_time(text)
    assert timedelta(0) <= moment - back < timedelta(milliseconds=1)


# --- next_due ----------------------------------------------------------------------------------


def test_next_due_interval_is_last_run_plus_every() -> None:
    assert next_due(INTERVAL_6H, utc(2026, 2, 1)) == utc(2026, 2, 1, 6)
    assert next_due({"kind": "interval", "every": "2h"}, utc(2026, 2, 1, 23)) == utc(2026, 2, 2, 1)
    assert next_due("90m", utc(2026, 2, 1)) == utc(2026, 2, 1, 1, 30)


def test_next_due_interval_ignores_the_local_clock() -> None:
    """Six hours are six hours, even across a DST change."""
    if not HAS_TZDATA:
        pytest.skip("the IANA tz database (America/Chicago) is not installed here")
    last = utc(2026, 3, 8, 5)  # 23:00 CST, three hours before clocks spring forward
    assert next_due(INTERVAL_6H, last, chicago()) == utc(2026, 3, 8, 11)


@pytest.mark.parametrize(
    ("last_run", "tz", "at", "expected"),
    [
        pytest.param(utc(2026, 2, 1, 7), UTC, "08:00", utc(2026, 2, 1, 8), id="later-today"),
        pytest.param(
            utc(2026, 2, 1, 8),
            UTC,
            "08:00",
            utc(2026, 2, 2, 8),
            id="exactly-at-the-time-means-tomorrow",
        ),
        pytest.param(utc(2026, 2, 1, 9), UTC, "08:00", utc(2026, 2, 2, 8), id="tomorrow"),
        pytest.param(
            utc(2026, 2, 1, 7, 59, 59, 999_999),
            UTC,
            "08:00",
            utc(2026, 2, 1, 8),
            id="a-microsecond-before",
        ),
        pytest.param(utc(2026, 2, 1, 3), IST, "08:00", utc(2026, 2, 2, 2, 30), id="ist-tomorrow"),
        pytest.param(
            utc(2026, 1, 31, 23),
            IST,
            "08:00",
            utc(2026, 2, 1, 2, 30),
            id="ist-already-the-next-day",
        ),
        pytest.param(utc(2026, 2, 1, 1), IST, "08:00", utc(2026, 2, 1, 2, 30), id="ist-today"),
        pytest.param(utc(2026, 2, 1, 15), PST, "08:00", utc(2026, 2, 1, 16), id="pst-today"),
        pytest.param(utc(2026, 2, 1, 17), PST, "08:00", utc(2026, 2, 2, 16), id="pst-tomorrow"),
        pytest.param(utc(2026, 2, 1, 7, 30), PST, "00:00", utc(2026, 2, 1, 8), id="pst-midnight"),
        pytest.param(utc(2026, 12, 31, 23), UTC, "08:00", utc(2027, 1, 1, 8), id="new-year"),
        pytest.param(utc(2028, 2, 28, 9), UTC, "08:00", utc(2028, 2, 29, 8), id="leap-day"),
    ],
)
def test_next_due_daily(last_run: datetime, tz: tzinfo, at: str, expected: datetime) -> None:
    due = next_due({"kind": "daily", "at": at}, last_run, tz)
    assert due == expected
    assert due.tzinfo is UTC


# America/Chicago in 2026: clocks spring forward on 8 March (02:00 CST -> 03:00 CDT) and
# fall back on 1 November (02:00 CDT -> 01:00 CST).
@needs_tzdata
@pytest.mark.parametrize(
    ("last_run", "at", "expected", "gap"),
    [
        pytest.param(
            utc(2026, 3, 7, 14),
            "08:00",
            utc(2026, 3, 8, 13),
            timedelta(hours=23),
            id="spring-forward-23h-day",
        ),
        pytest.param(
            utc(2026, 10, 31, 13),
            "08:00",
            utc(2026, 11, 1, 14),
            timedelta(hours=25),
            id="fall-back-25h-day",
        ),
        pytest.param(
            utc(2026, 3, 7, 8, 30),
            "02:30",
            utc(2026, 3, 8, 8, 30),
            timedelta(hours=24),
            id="skipped-02:30-runs-at-03:30-CDT",
        ),
        pytest.param(
            utc(2026, 3, 8, 8, 30),
            "02:30",
            utc(2026, 3, 9, 7, 30),
            timedelta(hours=23),
            id="day-after-the-gap-back-to-02:30",
        ),
        pytest.param(
            utc(2026, 10, 31, 6, 30),
            "01:30",
            utc(2026, 11, 1, 6, 30),
            timedelta(hours=24),
            id="repeated-01:30-first-occurrence",
        ),
        pytest.param(
            utc(2026, 11, 1, 6, 30),
            "01:30",
            utc(2026, 11, 2, 7, 30),
            timedelta(hours=25),
            id="repeated-01:30-runs-once",
        ),
        pytest.param(
            utc(2026, 11, 1, 7, 10),
            "01:30",
            utc(2026, 11, 2, 7, 30),
            timedelta(hours=24, minutes=20),
            id="during-the-repeat-hour",
        ),
    ],
)
def test_next_due_daily_across_dst_in_chicago(
    last_run: datetime, at: str, expected: datetime, gap: timedelta
) -> None:
    due = next_due({"kind": "daily", "at": at}, last_run, chicago())
    assert due == expected
    assert due - last_run == gap


@contextlib.contextmanager
def machine_zone(name: str) -> Iterator[None]:
    """The machine's local zone (the TZ variable) set to `name` for a while."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TZ", name)
        time_module.tzset()
        try:
            yield
        finally:
            patch.undo()
            time_module.tzset()


needs_tzset = pytest.mark.skipif(
    not hasattr(time_module, "tzset"), reason="time.tzset (setting the local zone) is POSIX-only"
)


@needs_tzdata
@needs_tzset
def test_no_tz_means_the_machines_local_zone() -> None:
    with machine_zone("America/Chicago"):
        for last_run in (utc(2026, 3, 7, 14), utc(2026, 10, 31, 13), utc(2026, 3, 7, 8, 30)):
            for at in ("08:00", "02:30", "01:30"):
                cadence = {"kind": "daily", "at": at}
                assert next_due(cadence, last_run) == next_due(cadence, last_run, chicago())
        assert is_overdue(task(), utc(2026, 2, 16, 3)) is False  # still 15 February in Chicago
        assert is_overdue(task(), utc(2026, 2, 16, 6)) is True


MACHINE_ZONES = ["America/Chicago", "Europe/London", "America/Santiago", "Australia/Lord_Howe"]


@needs_tzdata
@needs_tzset
@given(
    st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2037, 1, 1), timezones=st.just(UTC)
    ),
    st.sampled_from(["00:00", "00:30", "01:30", "02:00", "02:30", "08:00", "23:30"]),
    st.sampled_from(MACHINE_ZONES),
)
def test_no_tz_agrees_with_zoneinfo_around_the_year(last_run: datetime, at: str, name: str) -> None:
    cadence = {"kind": "daily", "at": at}
    expected = next_due(cadence, last_run, zoneinfo.ZoneInfo(name))
    with machine_zone(name):
        assert next_due(cadence, last_run) == expected


def test_next_due_rejects_naive_and_bad_input() -> None:
    with pytest.raises(ValueError, match=r"^last_run: expected a timezone-aware datetime"):
        next_due(INTERVAL_6H, datetime(2026, 2, 1))
    with pytest.raises(ValueError, match=r"^cadence\.every: "):
        next_due({"kind": "interval", "every": "6x"}, utc(2026, 2, 1))
    with pytest.raises(ValueError, match=r"^cadence\.every: expected an interval that ends"):
        next_due("999999999d", utc(2026, 2, 1))


ZONES: list[tzinfo] = [UTC, IST, PST, timezone(timedelta(hours=13, minutes=45))]
if HAS_TZDATA:
    ZONES += [zoneinfo.ZoneInfo(name) for name in (*MACHINE_ZONES, "Asia/Tokyo")]

aware_times = st.datetimes(
    min_value=datetime(2000, 1, 1),
    max_value=datetime(2100, 1, 1),
    timezones=st.sampled_from([UTC, IST, PST]),
)


@given(aware_times, every_text, st.sampled_from(ZONES))
def test_next_due_interval_property(last_run: datetime, every: str, tz: tzinfo) -> None:
    due = next_due({"kind": "interval", "every": every}, last_run, tz)
    assert due - last_run == timedelta(seconds=interval_seconds(every))
    assert due.tzinfo is UTC


def _exists(day: date, at: time, tz: tzinfo) -> bool:
    """Whether the clock in `tz` ever reads `at` on `day` (False inside a DST gap)."""
    wall = datetime.combine(day, at, tzinfo=tz)
    return wall.astimezone(UTC).astimezone(tz).replace(tzinfo=None) == wall.replace(tzinfo=None)


@given(aware_times, at_text, st.sampled_from(ZONES))
def test_next_due_daily_property(last_run: datetime, at: str, tz: tzinfo) -> None:
    due = next_due({"kind": "daily", "at": at}, last_run, tz)
    wanted = time.fromisoformat(parse_cadence({"kind": "daily", "at": at})["at"])
    assert due.tzinfo is UTC
    assert last_run < due <= last_run + timedelta(hours=25)
    local = due.astimezone(tz)
    if _exists(local.date(), wanted, tz):
        assert local.time() == wanted
    else:  # skipped by a DST change: runs when the clock would have read it
        assert local.time() > wanted
    # ... and it is the first such time: none between last_run and due.
    previous_day = local.date() - timedelta(days=1)
    if _exists(previous_day, wanted, tz):
        assert datetime.combine(previous_day, wanted, tzinfo=tz) <= last_run


# --- is_due -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "now", "expected"),
    [
        pytest.param({}, utc(2026, 2, 1), True, id="seed-never-run-is-due"),
        pytest.param(
            {"next_due": "2026-02-01T06:00:00.000Z"},
            utc(2026, 2, 1, 5, 59),
            False,
            id="before-next-due",
        ),
        pytest.param(
            {"next_due": "2026-02-01T06:00:00.000Z"},
            utc(2026, 2, 1, 6),
            True,
            id="exactly-at-next-due",
        ),
        pytest.param(
            {"next_due": "2026-02-01T06:00:00.000Z"}, utc(2026, 2, 2), True, id="long-past-next-due"
        ),
        pytest.param(
            {"next_due": "2026-02-01T06:00:00.000Z", "enabled": False},
            utc(2026, 2, 2),
            False,
            id="disabled",
        ),
        pytest.param({"enabled": False}, utc(2026, 2, 1), False, id="disabled-never-run"),
        pytest.param(
            {"next_due": "2026-02-01T11:30:00+05:30"},
            utc(2026, 2, 1, 6),
            True,
            id="offset-in-next-due",
        ),
        pytest.param(
            {"last_run": "2026-02-01T00:00:00.000Z"},
            utc(2026, 2, 1, 5),
            False,
            id="next-due-missing-worked-out-from-last-run",
        ),
        pytest.param(
            {"last_run": "2026-02-01T00:00:00.000Z"},
            utc(2026, 2, 1, 6),
            True,
            id="next-due-missing-and-passed",
        ),
    ],
)
def test_is_due(changes: dict[str, Any], now: datetime, expected: bool) -> None:
    assert is_due(reminder(**changes), now) is expected


def test_is_due_without_an_enabled_field_counts_as_enabled() -> None:
    entry = reminder()
    del entry["enabled"], entry["next_due"]
    assert is_due(entry, utc(2026, 2, 1)) is True


def test_is_due_daily_uses_the_zone_when_next_due_is_missing() -> None:
    entry = reminder(cadence=DAILY_8, last_run="2026-02-01T09:00:00.000Z")
    now = utc(2026, 2, 1, 17)  # 09:00 PST on 1 February
    assert is_due(entry, now, UTC) is False  # next 08:00 UTC is 2 February
    assert is_due(entry, now, PST) is True  # 08:00 PST on 1 February was 16:00 UTC


@pytest.mark.parametrize(
    ("entry", "now", "message"),
    [
        pytest.param(
            reminder(next_due="soon"),
            utc(2026, 2, 1),
            r"^next_due: expected an ISO",
            id="bad-next-due",
        ),
        pytest.param(
            reminder(enabled="yes"),
            utc(2026, 2, 1),
            r"^enabled: expected true or false",
            id="enabled-not-a-bool",
        ),
        pytest.param(
            reminder(), datetime(2026, 2, 1), r"^now: expected a timezone-aware", id="naive-now"
        ),
        pytest.param(task(), utc(2026, 2, 1), r"^type: expected reminder, got 'task'", id="a-task"),
    ],
)
def test_is_due_rejects(entry: dict[str, Any], now: datetime, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        is_due(entry, now)


# --- record_run -----------------------------------------------------------------------------------


def test_record_run_ok_on_the_seed_reminder() -> None:
    before = copy.deepcopy(SEED_REMINDER)
    ran = record_run(SEED_REMINDER, "ok", utc(2026, 2, 1))
    assert before == SEED_REMINDER  # the input is untouched
    assert ran == {
        **before,
        "last_run": "2026-02-01T00:00:00.000Z",
        "next_due": "2026-02-01T06:00:00.000Z",
        "last_result": "ok",
        "last_error": None,
    }
    assert list(ran) == list(before)  # same keys, same order
    assert is_due(ran, utc(2026, 2, 1, 5, 59, 59)) is False
    assert is_due(ran, utc(2026, 2, 1, 6)) is True


def test_record_run_error_keeps_the_message() -> None:
    ran = record_run(SEED_REMINDER, "error", utc(2026, 2, 1, 6), error="Script exited with code 1")
    assert ran["last_result"] == "error"
    assert ran["last_error"] == "Script exited with code 1"
    assert ran["last_run"] == "2026-02-01T06:00:00.000Z"
    assert ran["next_due"] == "2026-02-01T12:00:00.000Z"


def test_a_later_ok_run_clears_the_error() -> None:
    failed = record_run(SEED_REMINDER, "error", utc(2026, 2, 1), error="Script exited with code 1")
    fixed = record_run(failed, "ok", utc(2026, 2, 1, 6))
    assert fixed["last_result"] == "ok"
    assert fixed["last_error"] is None


@pytest.mark.parametrize("result", ["ok", "skipped"])
def test_record_run_drops_an_error_message_unless_the_run_failed(result: str) -> None:
    ran = record_run(SEED_REMINDER, result, utc(2026, 2, 1), error="ignored")
    assert ran["last_result"] == result
    assert ran["last_error"] is None
    assert ran["next_due"] == "2026-02-01T06:00:00.000Z"  # a skip still moves the schedule


def test_record_run_daily_in_a_zone() -> None:
    entry = reminder(cadence="{kind:daily,at:08:00}")
    ran = record_run(entry, "ok", datetime(2026, 2, 1, 8, 0, 7, 250_000, tzinfo=PST), tz=PST)
    assert ran["last_run"] == "2026-02-01T16:00:07.250Z"
    assert ran["next_due"] == "2026-02-02T16:00:00.000Z"
    assert ran["cadence"] == "{kind:daily,at:08:00}"  # stored as written


@needs_tzdata
def test_record_run_daily_across_spring_forward() -> None:
    entry = reminder(cadence={"kind": "daily", "at": "08:00"})
    ran = record_run(entry, "ok", utc(2026, 3, 7, 14), tz=chicago())
    assert ran["next_due"] == "2026-03-08T13:00:00.000Z"  # 08:00 CDT


@pytest.mark.parametrize(
    ("entry", "result", "now", "message"),
    [
        pytest.param(
            SEED_REMINDER,
            "failed",
            utc(2026, 2, 1),
            r"^last_result: expected one of ok, error, skipped, got 'failed'$",
            id="unknown-result",
        ),
        pytest.param(SEED_REMINDER, "ok", datetime(2026, 2, 1), r"^now: expected", id="naive-now"),
        pytest.param(
            reminder(cadence={"kind": "interval", "every": "6x"}),
            "ok",
            utc(2026, 2, 1),
            r"^cadence\.every: ",
            id="bad-cadence",
        ),
        pytest.param(
            {"type": "reminder"}, "ok", utc(2026, 2, 1), r"^cadence: required", id="no-cadence"
        ),
        pytest.param(SEED_TASK, "ok", utc(2026, 2, 1), r"^type: expected reminder", id="a-task"),
    ],
)
def test_record_run_rejects(
    entry: dict[str, Any], result: str, now: datetime, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        record_run(entry, result, now)


# --- tasks --------------------------------------------------------------------------------------


def test_complete_task_on_the_seed_task() -> None:
    before = copy.deepcopy(SEED_TASK)
    done = complete_task(SEED_TASK, utc(2026, 2, 12, 9, 30))
    assert before == SEED_TASK
    assert done == {**before, "status": "done", "completedAt": "2026-02-12T09:30:00.000Z"}
    assert matches_filter(done, "done") is True
    assert matches_filter(done, "pending") is False
    assert is_overdue(done, utc(2026, 3, 1), UTC) is False  # done is never overdue


def test_complete_task_rejects_other_entries_and_naive_times() -> None:
    with pytest.raises(ValueError, match=r"^type: expected task, got 'reminder'"):
        complete_task(SEED_REMINDER, utc(2026, 2, 12))
    with pytest.raises(ValueError, match=r"^now: expected a timezone-aware"):
        complete_task(SEED_TASK, datetime(2026, 2, 12))


@pytest.mark.parametrize(
    ("changes", "now", "tz", "expected"),
    [
        pytest.param({}, utc(2026, 2, 14, 12), UTC, False, id="seed-before-due"),
        pytest.param({}, utc(2026, 2, 15, 23, 59), UTC, False, id="due-today-is-not-overdue"),
        pytest.param({}, utc(2026, 2, 16), UTC, True, id="day-after-due"),
        pytest.param({}, utc(2026, 2, 16, 3), PST, False, id="still-the-15th-in-pst"),
        pytest.param({}, utc(2026, 2, 15, 18), IST, False, id="still-the-15th-in-ist"),
        pytest.param({}, utc(2026, 2, 15, 20), IST, True, id="already-the-16th-in-ist"),
        pytest.param(
            {},
            utc(2026, 2, 15, 20),
            timezone(timedelta(hours=14)),
            True,
            id="already-the-16th-at-plus-14",
        ),
        pytest.param({"due": None}, utc(2030, 1, 1), UTC, False, id="no-due-date"),
        pytest.param({"status": "done"}, utc(2030, 1, 1), UTC, False, id="done"),
        pytest.param(
            {"due": "2026-02-15T23:00:00-08:00"},
            utc(2026, 2, 16, 12),
            UTC,
            False,
            id="timestamp-counts-by-its-local-date",
        ),
        pytest.param(
            {"due": "2026-02-15T23:00:00-08:00"},
            utc(2026, 2, 17),
            UTC,
            True,
            id="timestamp-day-after",
        ),
        pytest.param(
            {"due": "2026-02-15T23:00:00.000Z"},
            utc(2026, 2, 16, 5),
            PST,
            False,
            id="timestamp-in-the-zone",
        ),
        pytest.param(
            {"due": "2026-02-15T23:00"},
            utc(2026, 2, 16),
            PST,
            False,
            id="no-offset-is-a-wall-clock-date",
        ),
    ],
)
def test_is_overdue(changes: dict[str, Any], now: datetime, tz: tzinfo, expected: bool) -> None:
    assert is_overdue(task(**changes), now, tz) is expected


@pytest.mark.parametrize("bad", ["next week", "2026-02-30", 20260215, "15/02/2026"])
def test_is_overdue_rejects_a_bad_due(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"^due: expected an ISO date like \"2026-02-15\""):
        is_overdue(task(due=bad), utc(2026, 2, 16), UTC)


# --- filters ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "name", "expected"),
    [
        pytest.param(SEED_TASK, "pending", True, id="seed-task-is-pending"),
        pytest.param(SEED_TASK, "done", False, id="seed-task-is-not-done"),
        pytest.param(SEED_TASK, "active", False, id="a-task-is-never-active"),
        pytest.param(SEED_REMINDER, "active", True, id="seed-reminder-is-active"),
        pytest.param(SEED_REMINDER, "pending", False, id="a-reminder-is-never-pending"),
        pytest.param(reminder(enabled=False), "active", False, id="disabled-reminder"),
        pytest.param(task(status="done"), "done", True, id="done-task"),
        pytest.param({"type": "learning", "text": "x"}, "pending", False, id="other-entry"),
        pytest.param({"type": "learning", "text": "x"}, "active", False, id="other-entry-active"),
    ],
)
def test_matches_filter(entry: dict[str, Any], name: str, expected: bool) -> None:
    assert matches_filter(entry, name) is expected


def test_the_seed_list_filters_pick_the_right_entries() -> None:
    entries = [
        SEED_TASK,
        task(id="t-2", status="done"),
        SEED_REMINDER,
        reminder(id="rem00002", enabled=False),
    ]
    assert [e["id"] for e in entries if matches_filter(e, "pending")] == ["t-abc123"]
    assert [e["id"] for e in entries if matches_filter(e, "active")] == ["rem00001"]


@pytest.mark.parametrize("name", ["due", "all", "Pending", ""])
def test_unknown_filters_list_the_known_ones(name: str) -> None:
    with pytest.raises(ValueError, match=r"^filter: expected one of pending, done, active"):
        matches_filter(SEED_TASK, name)
