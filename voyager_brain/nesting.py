"""Where a JSON or TOML text nests deepest: what a "nested too deeply" error says.

The standard library's JSON and TOML readers recurse once per level of nested arrays and
objects (inline tables), so a hostile file nested a few thousand levels deep makes them
raise RecursionError, which names neither the file nor the line. Their callers catch it
at the boundary and ask `too_deep` for the detail of the one-line error they raise. It
runs only then, so it is written for simplicity rather than speed.

Standard library only: brain.json, config.toml and the hooks' stdin are read here.
"""

from __future__ import annotations

import re

# What changes the depth or the line outside a string, what starts a string or a TOML
# comment; and, inside a string, what may end it (or a backslash escaping the next
# character). A valid JSON text has none of ' # """ outside its strings, and the JSON
# before the level that could not be read was valid, so one scan serves both formats.
_OUTSIDE = re.compile(r"\"\"\"|'''|[\"'\[\]{}\n#]")
_INSIDE = {
    '"': re.compile(r'[\\"\n]'),
    "'": re.compile(r"['\n]"),
    '"""': re.compile(r'\\.|"""|\n', re.DOTALL),
    "'''": re.compile(r"'''|\n"),
}


def deepest(text: str) -> tuple[int, int]:
    """The greatest depth of arrays and objects (or inline tables) in `text`, counted
    outside strings and comments, and the 1-based line where it is first reached."""
    depth = best = 0
    line = best_line = 1
    pos, size = 0, len(text)
    while pos < size:
        m = _OUTSIDE.search(text, pos)
        if m is None:
            break
        token, pos = m[0], m.end()
        if token == "\n":
            line += 1
        elif token in "[{":
            depth += 1
            if depth > best:
                best, best_line = depth, line
        elif token in "]}":
            depth = max(depth - 1, 0)
        elif token == "#":
            end = text.find("\n", pos)
            pos = size if end < 0 else end
        else:  # a string: skip to its end, counting the lines it spans
            inside = _INSIDE[token]
            while pos < size:
                s = inside.search(text, pos)
                if s is None:
                    pos = size
                    break
                pos = s.end()
                if s[0] == "\n" or s[0].endswith("\n"):
                    line += 1
                    if len(token) == 1 and s[0] == "\n":
                        break  # a one-line string never spans lines: the text is broken
                elif s[0] == "\\" and pos < size:
                    pos += 1  # the escaped character
                    if text[pos - 1] == "\n":
                        line += 1
                elif s[0] == token:
                    break
    return best, best_line


def depth(value: object) -> int:
    """How many levels of lists and dicts `value` nests (0 for anything else), level by
    level without recursion. A container met again (a YAML alias, which may even hold
    itself) is counted where it is first met."""
    levels, level = 0, [value]
    seen: set[int] = set()
    while True:
        containers = [v for v in level if isinstance(v, (dict, list, tuple)) and id(v) not in seen]
        if not containers:
            return levels
        levels += 1
        seen.update(map(id, containers))
        level = [x for c in containers for x in (c.values() if isinstance(c, dict) else c)]


def too_deep(text: str) -> tuple[str, int]:
    """The detail and line of the error for a `text` too deeply nested to be read."""
    depth, line = deepest(text)
    return f"nested {depth} levels deep, more than can be read; expected a flatter file", line
