"""A shell command's exit, as agents report it in the command's output: Codex ("Exit
code: 1", "Process exited with code 1") and Gemini CLI ("[Exit Code: 1]"). One reading
for the hooks and the transcript readers, so that both record a call alike."""

from __future__ import annotations


def exit_failed(output: str | None) -> bool:
    """Whether the output says the command exited non-zero. Only its first two and last
    three lines are read: the command's own output may mention exit codes."""
    import re

    if not output:
        return False
    lines = output.splitlines()
    ends = "\n".join(lines[:2] + lines[-3:])
    found = re.search(r"(?:Exit [Cc]ode:|exited with code)\s*-?(\d+)", ends)
    # Digit by digit: int() of the whole refuses more than 4,300 digits.
    return found is not None and any(digit != "0" for digit in found.group(1))
