"""The dashboard's SVG charts: geometry read back from the parsed XML, escaping of hostile
labels, the empty pictures, determinism, and properties over arbitrary text."""

from __future__ import annotations

import html
import itertools
import math
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voyager_brain.ui.charts import (
    DAY_LABEL_CHARS,
    FREE_FILL,
    MAX_DAY_LABELS,
    PALETTE,
    PART_LABEL_CHARS,
    PLOT_HEIGHT,
    SERIES_LABEL_CHARS,
    WIDTH,
    activity,
    daily_bars,
    stacked_bar,
)

SVG = "{http://www.w3.org/2000/svg}"
SPAN = WIDTH - 16  # stacked_bar's bar runs from one padding to the other
HOSTILE = "<script>alert(1)</script>"
DAYS = ["2026-03-21", "2026-03-22", "2026-03-23"]


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def tag(element: ET.Element) -> str:
    return element.tag.removeprefix(SVG)


def tooltip(element: ET.Element) -> str:
    title = element.find(f"{SVG}title")
    assert title is not None
    return title.text or ""


def bar_segments(root: ET.Element) -> list[ET.Element]:
    """stacked_bar's segments: the rects directly under the root."""
    return root.findall(f"{SVG}rect")


def columns(root: ET.Element) -> list[ET.Element]:
    """The column charts' pieces: the rects directly under the root (legend swatches and
    axes sit in groups)."""
    return root.findall(f"{SVG}rect")


def legend_texts(root: ET.Element) -> list[str]:
    legend = root.find(f"{SVG}g[@class='legend']")
    assert legend is not None
    return [t.text or "" for t in legend.iter(f"{SVG}text")]


def axis(root: ET.Element) -> ET.Element:
    found = root.find(f"{SVG}g[@class='axis']")
    assert found is not None
    return found


def day_labels(root: ET.Element) -> list[ET.Element]:
    return [t for t in axis(root).findall(f"{SVG}text") if t.get("text-anchor") == "middle"]


def y_labels(root: ET.Element) -> list[str]:
    return [t.text or "" for t in axis(root).findall(f"{SVG}text") if t.get("text-anchor") == "end"]


def num(element: ET.Element, attribute: str) -> float:
    value = element.get(attribute)
    assert value is not None, attribute
    return float(value)


def is_no_data(root: ET.Element) -> bool:
    return [t.text for t in root.iter(f"{SVG}text")] == ["No data yet"]


# An independent statement of the text rule: XML 1.0's Char production, anything else
# becomes U+FFFD, and tab and line breaks become spaces.
def drawn(text: str) -> str:
    def char(c: str) -> str:
        o = ord(c)
        if c in "\t\n\r":
            return " "
        ok = 0x20 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or o >= 0x10000
        return c if ok else "\ufffd"

    return "".join(char(c) for c in text)


def shows(shown: str, full: str, limit: int) -> bool:
    """SHOWN is FULL as drawn, or cut to LIMIT characters ending in an ellipsis."""
    full = drawn(full)
    if len(full) <= limit:
        return shown == full
    return len(shown) == limit and shown.endswith("…") and full.startswith(shown[:-1])


# stacked_bar


def test_stacked_bar_segments_are_proportional_to_the_budget() -> None:
    root = parse(stacked_bar([("Project state", 812), ("Rules", 300)], 2000, title="Budget"))
    segments = bar_segments(root)
    assert len(segments) == 3
    for segment, tokens in zip(segments, [812, 300, 888], strict=True):
        assert num(segment, "width") == pytest.approx(SPAN * tokens / 2000, abs=0.11)
    # Adjacent: each starts where the previous ends, and together they span the bar.
    for before, after in itertools.pairwise(segments):
        assert num(before, "x") + num(before, "width") == pytest.approx(num(after, "x"))
    assert sum(num(s, "width") for s in segments) == pytest.approx(SPAN)
    assert [s.get("fill") for s in segments] == [PALETTE[0], PALETTE[1], FREE_FILL]


def test_stacked_bar_draws_the_unused_budget_as_free() -> None:
    root = parse(stacked_bar([("Project state", 812), ("Rules", 300)], 2000, title="Budget"))
    free = bar_segments(root)[-1]
    assert free.get("class") == "free"
    assert tooltip(free) == "free: 888 tokens (44%)"
    assert [s.get("class") for s in bar_segments(root)[:-1]] == [None, None]
    assert root.find(f"{SVG}line[@class='budget']") is None


def test_stacked_bar_legend_and_tooltips() -> None:
    root = parse(stacked_bar([("Project state", 812), ("Rules", 300)], 2000, title="Budget"))
    assert legend_texts(root) == ["Project state 812", "Rules 300", "free 888"]
    assert [tooltip(s) for s in bar_segments(root)] == [
        "Project state: 812 tokens (41%)",
        "Rules: 300 tokens (15%)",
        "free: 888 tokens (44%)",
    ]


def test_stacked_bar_over_budget_scales_to_the_sum_and_marks_the_budget() -> None:
    root = parse(stacked_bar([("a", 300), ("b", 500)], 400, title="Over"))
    segments = bar_segments(root)
    assert len(segments) == 2  # no free segment
    assert num(segments[0], "width") == pytest.approx(SPAN * 300 / 800, abs=0.11)
    assert num(segments[1], "width") == pytest.approx(SPAN * 500 / 800, abs=0.11)
    assert sum(num(s, "width") for s in segments) == pytest.approx(SPAN)
    assert tooltip(segments[1]) == "b: 500 tokens (62%)"
    budget = root.find(f"{SVG}line[@class='budget']")
    assert budget is not None
    assert num(budget, "x1") == pytest.approx(8 + SPAN * 400 / 800, abs=0.06)
    assert tooltip(budget) == "budget: 400 tokens, 400 over"
    assert legend_texts(root) == ["a 300", "b 500"]


def test_stacked_bar_exactly_on_budget_has_no_free_segment() -> None:
    root = parse(stacked_bar([("a", 1), ("b", 3)], 4, title="Full"))
    assert [s.get("class") for s in bar_segments(root)] == [None, None]
    assert root.find(f"{SVG}line") is None


def test_stacked_bar_cycles_the_palette_in_order() -> None:
    parts = [(f"s{i}", 1) for i in range(len(PALETTE) + 2)]
    fills = [s.get("fill") for s in bar_segments(parse(stacked_bar(parts, 0, title="t")))]
    assert fills == [*PALETTE, PALETTE[0], PALETTE[1]]
    assert len(set(PALETTE)) == len(PALETTE) and FREE_FILL not in PALETTE


@pytest.mark.parametrize(
    ("parts", "total"),
    [([], 2000), ([], 0), ([("a", 0), ("b", 0)], 2000), ([("a", 0)], 0), ([("a", -5)], 10)],
)
def test_stacked_bar_without_usage_says_no_data(parts: list[tuple[str, int]], total: int) -> None:
    root = parse(stacked_bar(parts, total, title="Budget"))
    assert is_no_data(root)
    assert root.find(f"{SVG}rect") is None


def test_stacked_bar_counts_negative_tokens_as_zero() -> None:
    root = parse(stacked_bar([("a", -50), ("b", 100)], 200, title="t"))
    segments = bar_segments(root)
    assert num(segments[0], "width") == 0
    assert num(segments[1], "width") == pytest.approx(SPAN / 2)
    assert legend_texts(root) == ["a 0", "b 100", "free 100"]


def test_long_legend_labels_are_cut_and_whole_in_the_tooltip() -> None:
    name = "A very long section name that will not fit"
    root = parse(stacked_bar([(name, 10)], 20, title="t"))
    shown = legend_texts(root)[0]
    assert shown == name[: PART_LABEL_CHARS - 1] + "… 10"
    assert tooltip(bar_segments(root)[0]) == f"{name}: 10 tokens (50%)"


# The root element, escaping, the text rule, determinism


def test_root_is_an_accessible_scalable_svg() -> None:
    for svg in (
        stacked_bar([("a", 1)], 2, title="Budget & more"),
        daily_bars({"r": [(DAYS[0], 1)]}, days=DAYS, title="Budget & more"),
        activity([], title="Budget & more", unit="calls"),
    ):
        root = parse(svg)
        assert root.get("role") == "img"
        assert root.get("aria-label") == "Budget & more"
        assert root.get("class") == "chart"
        assert root.get("width") == "100%"
        view_box = (root.get("viewBox") or "").split()
        assert len(view_box) == 4 and float(view_box[2]) == WIDTH and float(view_box[3]) > 0
        assert tag(root[0]) == "title" and root[0].text == "Budget & more"
        assert "Budget &amp; more" in svg


def test_hostile_text_appears_only_escaped() -> None:
    escaped = html.escape(HOSTILE, quote=True)
    outputs = [
        stacked_bar([(HOSTILE, 5)], 10, title=HOSTILE),
        daily_bars({HOSTILE: [(HOSTILE, 2)]}, days=[HOSTILE], title=HOSTILE),
        activity([(HOSTILE, 3)], title=HOSTILE, unit=HOSTILE),
        activity([], title=HOSTILE, unit="x"),
    ]
    for svg in outputs:
        assert "<script" not in svg.lower()
        assert escaped in svg
        root = parse(svg)
        assert root.get("aria-label") == HOSTILE
        assert all(e.tag.startswith(SVG) for e in root.iter())
    root = parse(outputs[2])
    assert tooltip(columns(root)[0]) == f"{HOSTILE}: 3 {HOSTILE}"


def test_characters_xml_cannot_hold_become_replacement_characters() -> None:
    name = "a\x00b\x0bc\td\ne\x1f"
    root = parse(stacked_bar([(name, 5)], 10, title="t\x01"))
    assert legend_texts(root)[0] == "a\ufffdb\ufffdc d e\ufffd 5"
    assert tooltip(bar_segments(root)[0]) == "a\ufffdb\ufffdc d e\ufffd: 5 tokens (50%)"
    assert root.get("aria-label") == "t\ufffd"
    root = parse(daily_bars({"\ud800x": [("\ufffe", 1)]}, days=["\ufffe"], title="t"))
    assert tooltip(columns(root)[0]) == "\ufffd · \ufffdx: 1"


def test_same_inputs_give_the_same_bytes() -> None:
    def draw() -> list[str]:
        return [
            stacked_bar([("Project state", 812), ("Rules", 300)], 2000, title="Budget"),
            daily_bars(
                {"#3 Use uv, never pip": [(DAYS[0], 4)], "#4": [(DAYS[2], 1)]},
                days=DAYS,
                title="Rules",
            ),
            activity([(d, 7 * i) for i, d in enumerate(DAYS)], title="Activity", unit="calls"),
        ]

    assert draw() == draw()


# daily_bars


def test_daily_bars_stacks_series_per_day() -> None:
    series = {
        "#3 Use uv, never pip": [(DAYS[0], 4), (DAYS[1], 1)],
        "#7 No force push": [(DAYS[0], 2), (DAYS[2], 3)],
    }
    root = parse(daily_bars(series, days=DAYS, title="Rule triggers"))
    pieces = columns(root)
    assert [tooltip(p) for p in pieces] == [
        "2026-03-21 · #3 Use uv, never pip: 4",
        "2026-03-21 · #7 No force push: 2",
        "2026-03-22 · #3 Use uv, never pip: 1",
        "2026-03-23 · #7 No force push: 3",
    ]
    assert [p.get("fill") for p in pieces] == [PALETTE[0], PALETTE[1], PALETTE[0], PALETTE[1]]
    # The peak day (6) fills the plot; heights are proportional to the counts.
    heights = [num(p, "height") for p in pieces]
    for height, count in zip(heights, [4, 2, 1, 3], strict=True):
        assert height == pytest.approx(PLOT_HEIGHT * count / 6, abs=0.11)
    # The first series sits at the bottom, the second on top of it.
    first, second = pieces[0], pieces[1]
    assert num(second, "y") + num(second, "height") == pytest.approx(num(first, "y"))
    # One column slot per day, in order, even for a day with nothing on it.
    xs = [num(p, "x") for p in pieces]
    assert xs[0] == xs[1] < xs[2] < xs[3]
    assert xs[3] - xs[2] == pytest.approx(xs[2] - xs[0])
    assert [t.text for t in day_labels(root)] == DAYS
    assert y_labels(root) == ["0", "3", "6"]
    assert legend_texts(root) == ["#3 Use uv, never pip", "#7 No force push"]


def test_daily_bars_sums_repeats_and_ignores_days_outside_the_range() -> None:
    series = {"r": [(DAYS[0], 2), (DAYS[0], 3), ("2020-01-01", 100)]}
    root = parse(daily_bars(series, days=DAYS, title="t"))
    assert [tooltip(p) for p in columns(root)] == ["2026-03-21 · r: 5"]
    assert y_labels(root) == ["0", "2.5", "5"]


@pytest.mark.parametrize("count", [1, 7, 8, 9, 14, 30, 31, 90, 365])
def test_day_labels_are_at_most_eight_and_evenly_spaced(count: int) -> None:
    days = [f"day{i:03d}" for i in range(count)]
    root = parse(activity([(d, 1) for d in days], title="t", unit="calls"))
    labels = day_labels(root)
    assert 1 <= len(labels) <= MAX_DAY_LABELS
    assert labels[0].text == days[0]
    if count <= MAX_DAY_LABELS:
        assert [t.text for t in labels] == days
    xs = [num(t, "x") for t in labels]
    gaps = [b - a for a, b in itertools.pairwise(xs)]
    assert max(gaps, default=0) - min(gaps, default=0) <= 0.11  # one rounding step
    assert len(columns(root)) == count


def test_thirty_days_show_eight_labels() -> None:
    days = [f"2026-03-{d:02d}" for d in range(1, 31)]
    root = parse(daily_bars({"r": [(days[5], 1)]}, days=days, title="t"))
    assert [t.text for t in day_labels(root)] == days[::4]


def test_long_series_and_day_labels_are_cut() -> None:
    name = "#12 " + "never edit generated files " * 3
    day = "a day label far longer than a date"
    root = parse(daily_bars({name: [(day, 2)]}, days=[day], title="t"))
    assert legend_texts(root) == [name[: SERIES_LABEL_CHARS - 1] + "…"]
    assert [t.text for t in day_labels(root)] == [day[: DAY_LABEL_CHARS - 1] + "…"]
    assert tooltip(columns(root)[0]) == f"{day} · {name}: 2"


@pytest.mark.parametrize(
    ("series", "days"),
    [
        ({}, DAYS),
        ({"r": []}, DAYS),
        ({"r": [(DAYS[0], 0)]}, DAYS),
        ({"r": [(DAYS[0], 4)]}, []),
        ({"r": [("2020-01-01", 4)]}, DAYS),
    ],
)
def test_daily_bars_without_counts_says_no_data(
    series: dict[str, list[tuple[str, int]]], days: list[str]
) -> None:
    assert is_no_data(parse(daily_bars(series, days=days, title="t")))


# activity


def test_activity_draws_one_column_per_day() -> None:
    points = [(DAYS[0], 120), (DAYS[1], 0), (DAYS[2], 60)]
    root = parse(activity(points, title="Activity", unit="tool calls"))
    pieces = columns(root)  # the zero day has a slot but nothing to draw
    assert [tooltip(p) for p in pieces] == [
        "2026-03-21: 120 tool calls",
        "2026-03-23: 60 tool calls",
    ]
    assert num(pieces[0], "height") == pytest.approx(PLOT_HEIGHT)
    assert num(pieces[1], "height") == pytest.approx(PLOT_HEIGHT / 2)
    assert {p.get("fill") for p in pieces} == {PALETTE[0]}
    assert [t.text for t in day_labels(root)] == DAYS
    assert y_labels(root) == ["0", "60", "120"]
    assert root.find(f"{SVG}g[@class='legend']") is None


@pytest.mark.parametrize("points", [[], [(DAYS[0], 0)], [(DAYS[0], -3), (DAYS[1], 0)]])
def test_activity_without_counts_says_no_data(points: list[tuple[str, int]]) -> None:
    root = parse(activity(points, title="Activity", unit="calls"))
    assert is_no_data(root)
    assert root.get("aria-label") == "Activity"


# Properties over arbitrary text and counts

counts = st.integers(min_value=0, max_value=10**9)


def check_safe(svg: str) -> ET.Element:
    assert "<script" not in svg.lower()
    root = parse(svg)
    for element in root.iter():
        assert element.tag.startswith(SVG)
    return root


@given(
    parts=st.lists(st.tuples(st.text(), counts), max_size=12),
    total=st.integers(min_value=-5, max_value=10**9),
    title=st.text(),
)
def test_stacked_bar_is_safe_for_any_text(
    parts: list[tuple[str, int]], total: int, title: str
) -> None:
    svg = stacked_bar(parts, total, title=title)
    root = check_safe(svg)
    assert root.get("aria-label") == drawn(title)
    assert tooltip(root) == drawn(title)
    used = sum(tokens for _, tokens in parts)
    if used == 0:
        assert is_no_data(root)
        return
    segments = bar_segments(root)
    assert sum(num(s, "width") for s in segments) == pytest.approx(SPAN, abs=0.2)
    shown = legend_texts(root)
    for (name, tokens), text, segment in zip(parts, shown, segments, strict=False):
        assert html.escape(drawn(name), quote=True) in svg
        assert text.endswith(f" {tokens}")
        assert shows(text.removesuffix(f" {tokens}"), name, PART_LABEL_CHARS)
        assert tooltip(segment).startswith(f"{drawn(name)}: {tokens} tokens (")
    assert len(shown) == len(parts) + (total > used)


@given(
    series=st.dictionaries(
        st.text(), st.lists(st.tuples(st.text(max_size=12), counts), max_size=6), max_size=6
    ),
    days=st.lists(st.text(max_size=12), max_size=40, unique=True),
    title=st.text(),
)
def test_daily_bars_is_safe_for_any_text(
    series: dict[str, list[tuple[str, int]]], days: list[str], title: str
) -> None:
    svg = daily_bars(series, days=days, title=title)
    root = check_safe(svg)
    assert root.get("aria-label") == drawn(title)
    in_range = [(name, d, n) for name, pairs in series.items() for d, n in pairs if d in days]
    if not any(n for _, _, n in in_range):
        assert is_no_data(root)
        return
    for name, text in zip(series, legend_texts(root), strict=True):
        assert html.escape(drawn(name), quote=True) in svg
        assert shows(text, name, SERIES_LABEL_CHARS)
    labels = day_labels(root)
    assert 1 <= len(labels) <= MAX_DAY_LABELS
    step = math.ceil(len(days) / MAX_DAY_LABELS)
    for label, day in zip(labels, days[::step], strict=True):
        assert shows(label.text or "", day, DAY_LABEL_CHARS)
    # A piece far smaller than the peak may round to nothing, never to more than the plot.
    for piece in columns(root):
        assert 0 <= num(piece, "height") <= PLOT_HEIGHT + 0.1


@given(
    points=st.lists(st.tuples(st.text(max_size=12), counts), max_size=40),
    title=st.text(),
    unit=st.text(),
)
def test_activity_is_safe_for_any_text(
    points: list[tuple[str, int]], title: str, unit: str
) -> None:
    svg = activity(points, title=title, unit=unit)
    root = check_safe(svg)
    assert root.get("aria-label") == drawn(title)
    nonzero = [(day, n) for day, n in points if n > 0]
    if not nonzero:
        assert is_no_data(root)
        return
    pieces = columns(root)
    assert [tooltip(p) for p in pieces] == [f"{drawn(d)}: {n} {drawn(unit)}" for d, n in nonzero]
    assert max(num(p, "height") for p in pieces) == pytest.approx(PLOT_HEIGHT, abs=0.11)
    assert html.escape(drawn(unit), quote=True) in svg
    assert svg == activity(points, title=title, unit=unit)
