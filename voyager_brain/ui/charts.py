"""The dashboard's pictures, drawn on the server as inline SVG strings.

No JavaScript and no chart library: each function returns one ``<svg>`` element as text,
ready to drop into a page. The output is deterministic (same inputs, same bytes: fixed
number precision, a fixed palette cycled in order), well-formed XML, and every piece of
caller text is escaped, so a label can never inject markup.

Text, the same in every chart:

* Characters XML 1.0 cannot hold (C0 controls other than tab, newline and carriage return,
  lone surrogates, U+FFFE, U+FFFF) become U+FFFD, the replacement character, so any
  ``str`` can be drawn. Tab, newline and carriage return become a space: a chart label is
  one line, and an XML parser would fold them to spaces inside attributes anyway.
* Labels on the axes and in legends are cut to a fixed number of characters, ending in
  "…"; the full text stays in the ``<title>`` tooltip.
* Negative numbers count as zero.

Styling belongs to the page: elements carry ``class="chart"``, ``"axis"``, ``"legend"``,
``"free"``, ``"budget"``, ``"empty"``; only colours are set here, as attributes.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence

__all__ = ["activity", "daily_bars", "stacked_bar"]

# Okabe & Ito's palette, told apart with every common colour-vision deficiency; black goes
# last, where it is seldom reached.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#56B4E9",
    "#CC79A7",
    "#F0E442",
    "#000000",
)
FREE_FILL = "#E5E5E5"  # the unused budget: light grey, unlike every palette colour
GRID_STROKE = "#D0D0D0"
AXIS_STROKE = "#808080"

WIDTH = 640  # viewBox units; the page scales the picture with CSS
PAD = 8
BAR_HEIGHT = 28  # stacked_bar's one bar
PLOT_HEIGHT = 160  # the column charts' plot area
AXIS_LEFT = 48  # room for the y-axis numbers
LEGEND_ROW = 18
MAX_BAR_WIDTH = 40
MAX_DAY_LABELS = 8  # more would overlap on 30 days
DAY_LABEL_CHARS = 10  # an ISO date fits whole
PART_LABEL_CHARS = 22  # stacked_bar's legend has three columns
SERIES_LABEL_CHARS = 40  # daily_bars' legend has two

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_LINE_BREAKS = str.maketrans("\t\n\r", "   ")


def _clean(text: str) -> str:
    """TEXT as it is drawn, before escaping: characters XML cannot hold replaced by
    U+FFFD, tab and line breaks by a space."""
    return _NOT_XML.sub("\ufffd", text).translate(_LINE_BREAKS)


def _cut(text: str, limit: int) -> str:
    """The cleaned TEXT, at most LIMIT characters: when longer, its first LIMIT - 1
    characters and "…"."""
    text = _clean(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _esc(text: str) -> str:
    return html.escape(_clean(text), quote=True)


def _f(x: float) -> str:
    return f"{x:.1f}"


def _num(x: float) -> str:
    """An axis number: whole numbers without a decimal point."""
    return str(int(x)) if x == int(x) else f"{x:.1f}"


def _svg(title: str, height: float, body: Sequence[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {_f(height)}" '
        f'width="100%" role="img" aria-label="{_esc(title)}" class="chart">'
        f"<title>{_esc(title)}</title>{''.join(body)}</svg>"
    )


def _no_data(title: str) -> str:
    text = f'<text x="{WIDTH // 2}" y="24" text-anchor="middle" class="empty">No data yet</text>'
    return _svg(title, 40, [text])


def _legend(items: Sequence[tuple[str, str, str, str]], top: float, columns: int) -> list[str]:
    """A legend of ITEMS (fill, CSS class or "", the drawn text, the full text for the
    tooltip) in COLUMNS fixed-width columns: text cannot be measured here, a grid can."""
    column_width = (WIDTH - 2 * PAD) / columns
    out = ['<g class="legend">']
    for i, (fill, css, text, full) in enumerate(items):
        x = PAD + (i % columns) * column_width
        y = top + (i // columns) * LEGEND_ROW
        css_attr = f' class="{css}"' if css else ""
        out.append(
            f"<g><title>{_esc(full)}</title>"
            f'<rect x="{_f(x)}" y="{_f(y)}" width="10" height="10" fill="{fill}"{css_attr}/>'
            f'<text x="{_f(x + 14)}" y="{_f(y + 9)}">{_esc(text)}</text></g>'
        )
    out.append("</g>")
    return out


def _legend_height(count: int, columns: int) -> int:
    return math.ceil(count / columns) * LEGEND_ROW


def stacked_bar(parts: Sequence[tuple[str, int]], total: int, *, title: str) -> str:
    """One horizontal bar for a budget of TOTAL tokens, split into one coloured segment per
    (section name, tokens used) in PARTS, in order, then a grey ``class="free"`` segment
    for what is left. Over budget, the bar stands for the sum instead, no free segment is
    drawn and a ``class="budget"`` line marks where TOTAL ends. Each segment's ``<title>``
    reads "Project state: 812 tokens (41%)", the share of the whole bar; a legend below
    reads "Project state 812". Nothing used gives the "No data yet" picture."""
    values = [(name, max(0, tokens)) for name, tokens in parts]
    used = sum(tokens for _, tokens in values)
    if used == 0:
        return _no_data(title)
    scale = max(total, used)
    segments = [
        (name, tokens, PALETTE[i % len(PALETTE)], "") for i, (name, tokens) in enumerate(values)
    ]
    if scale > used:
        segments.append(("free", scale - used, FREE_FILL, "free"))

    span = WIDTH - 2 * PAD
    body: list[str] = []
    done = 0
    for name, tokens, fill, css in segments:
        # Round the edges, not the widths, so the segments meet without gaps or overlaps.
        x0 = round(PAD + span * done / scale, 1)
        done += tokens
        x1 = round(PAD + span * done / scale, 1)
        css_attr = f' class="{css}"' if css else ""
        tip = f"{name}: {tokens} tokens ({100 * tokens / scale:.0f}%)"
        body.append(
            f'<rect x="{_f(x0)}" y="{PAD}" width="{_f(x1 - x0)}" height="{BAR_HEIGHT}" '
            f'fill="{fill}"{css_attr}><title>{_esc(tip)}</title></rect>'
        )
    if 0 < total < used:
        x = _f(PAD + span * total / scale)
        tip = f"budget: {total} tokens, {used - total} over"
        body.append(
            f'<line x1="{x}" y1="{PAD - 4}" x2="{x}" y2="{PAD + BAR_HEIGHT + 4}" '
            f'stroke="{AXIS_STROKE}" stroke-width="2" class="budget"><title>{_esc(tip)}</title>'
            "</line>"
        )

    items = [
        (fill, css, f"{_cut(name, PART_LABEL_CHARS)} {tokens}", f"{name}: {tokens} tokens")
        for name, tokens, fill, css in segments
    ]
    top = PAD + BAR_HEIGHT + 12
    body += _legend(items, top, 3)
    return _svg(title, top + _legend_height(len(items), 3) + PAD, body)


def _columns(
    title: str,
    days: Sequence[str],
    stacks: Sequence[Sequence[tuple[int, str, str]]],
    legend: Sequence[tuple[str, str, str, str]],
) -> str:
    """A column chart: one column per day, STACKS[i] being day i's (value, fill, tooltip)
    pieces from the bottom up; y axis with 0, the middle and the peak; at most
    MAX_DAY_LABELS day labels, evenly spaced; LEGEND below in two columns."""
    peak = max((sum(value for value, _, _ in stack) for stack in stacks), default=0)
    if peak == 0:  # also no days at all
        return _no_data(title)
    left, right = AXIS_LEFT, WIDTH - PAD
    bottom = PAD + PLOT_HEIGHT  # the plot's top is at PAD, where the peak's gridline is
    slot = (right - left) / len(days)
    # A tenth of the slot either side keeps neighbouring days apart; the cap keeps a week
    # from drawing slabs.
    bar = min(slot * 0.8, MAX_BAR_WIDTH)

    body = ['<g class="axis">']
    for value in (0, peak / 2, peak):
        y = _f(bottom - PLOT_HEIGHT * value / peak)
        stroke = AXIS_STROKE if value == 0 else GRID_STROKE
        body.append(
            f'<line x1="{left}" y1="{y}" x2="{right}" y2="{y}" stroke="{stroke}"/>'
            f'<text x="{left - 4}" y="{y}" dy="4" text-anchor="end">{_num(value)}</text>'
        )
    step = math.ceil(len(days) / MAX_DAY_LABELS)
    for i in range(0, len(days), step):
        x = _f(left + slot * (i + 0.5))
        label = _esc(_cut(days[i], DAY_LABEL_CHARS))
        body.append(f'<text x="{x}" y="{bottom + 16}" text-anchor="middle">{label}</text>')
    body.append("</g>")

    for i, stack in enumerate(stacks):
        x = _f(left + slot * i + (slot - bar) / 2)
        done = 0
        for value, fill, tip in stack:
            if value == 0:  # nothing to see or point at
                continue
            y0 = round(bottom - PLOT_HEIGHT * done / peak, 1)
            done += value
            y1 = round(bottom - PLOT_HEIGHT * done / peak, 1)
            body.append(
                f'<rect x="{x}" y="{_f(y1)}" width="{_f(bar)}" height="{_f(y0 - y1)}" '
                f'fill="{fill}"><title>{_esc(tip)}</title></rect>'
            )

    legend_top = bottom + 30
    height = bottom + 24 + PAD
    if legend:
        body += _legend(legend, legend_top, 2)
        height = legend_top + _legend_height(len(legend), 2) + PAD
    return _svg(title, height, body)


def daily_bars(
    series: Mapping[str, Sequence[tuple[str, int]]], *, days: Sequence[str], title: str
) -> str:
    """Counts per day per series (rule triggers per day per rule): one column per entry of
    DAYS, in that order, zero days included, each stacked from SERIES' (day, count) pairs
    in the mapping's order, one palette colour per series. Pairs for a day not in DAYS are
    left out; a day repeated within a series is summed. Each piece's ``<title>`` reads
    "2026-03-21 · #3 Use uv, never pip: 4"; the legend names the series. No days, or
    only zeros, gives the "No data yet" picture."""
    names = list(series)
    counts: list[dict[str, int]] = []
    for name in names:
        per_day: dict[str, int] = {}
        for day, count in series[name]:
            per_day[day] = per_day.get(day, 0) + max(0, count)
        counts.append(per_day)
    colours = [PALETTE[j % len(PALETTE)] for j in range(len(names))]
    stacks = [
        [
            (per_day.get(day, 0), colour, f"{day} · {name}: {per_day.get(day, 0)}")
            for name, per_day, colour in zip(names, counts, colours, strict=True)
        ]
        for day in days
    ]
    legend = [
        (colour, "", _cut(name, SERIES_LABEL_CHARS), name)
        for name, colour in zip(names, colours, strict=True)
    ]
    return _columns(title, days, stacks, legend)


def activity(points: Sequence[tuple[str, int]], *, title: str, unit: str) -> str:
    """One column per (day, count) in POINTS, in order (tool calls per day, say), with the
    axes of `daily_bars` and no legend. Each column's ``<title>`` reads
    "2026-03-21: 120 tool calls", UNIT naming the count. No points, or only zeros, gives
    the "No data yet" picture."""
    stacks = [
        [(max(0, count), PALETTE[0], f"{day}: {max(0, count)} {unit}")] for day, count in points
    ]
    return _columns(title, [day for day, _ in points], stacks, [])
