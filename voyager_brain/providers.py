"""Models are optional: the provider interface for summaries and auto-memory.

The default is offline (no provider: the callers use their deterministic extractive
code). ``model_command`` in config.toml names a command that reads a prompt on stdin and
answers on stdout, such as ``llm -m MODEL``, ``ollama run MODEL`` or ``claude -p``. A
command that fails or runs past ``model_timeout_seconds`` raises `ProviderError`, and
callers fall back to the offline path with a warning, losing nothing.
"""

from __future__ import annotations

import shlex
import subprocess
from typing import Protocol

from .config import Config
from .errors import BrainError


class ProviderError(BrainError):
    """The model command failed, timed out, or answered nothing."""


class Provider(Protocol):
    name: str

    def complete(self, prompt: str) -> str: ...


class CommandProvider:
    """Pipes the prompt to a command and returns what it prints."""

    def __init__(self, command: str, timeout: float = 60.0) -> None:
        self.argv = shlex.split(command)
        self.name = f"command: {command}"
        self.timeout = timeout

    def complete(self, prompt: str) -> str:
        try:
            done = subprocess.run(
                self.argv,
                input=prompt,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise ProviderError(f"{self.argv[0]}: no answer within {self.timeout:g}s") from None
        except OSError as exc:
            raise ProviderError(f"{self.argv[0]}: {exc.strerror or exc}") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise ProviderError(f"{self.argv[0]}: exit code {done.returncode}: {last}")
        if not done.stdout.strip():
            raise ProviderError(f"{self.argv[0]}: answered nothing")
        return done.stdout


def get_provider(config: Config) -> Provider | None:
    """The configured model command, or None for the offline default."""
    if not config.model_command.strip():
        return None
    return CommandProvider(config.model_command, config.model_timeout_seconds)
