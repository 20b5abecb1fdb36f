"""The session-start document built by a `BrainManager` and kept in the context cache
(`context/cache.py`), so that the next plain `voyager-brain context`, session start or
MCP read serves it without building it again. A cached document is served without
importing `BrainManager` (brain.md's parser, the state's merge): it is imported only to
build one."""

from __future__ import annotations

from ..context import cache as context_cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os

    from ..context.build import ContextDocument
    from .manager import BrainManager


def build_and_cache(bm: BrainManager, budget: int | None, *, explain: bool) -> ContextDocument:
    """The document within `budget` tokens (default: prompt_budget), built now and stored
    in the cache against what the files were before it was built."""
    before = context_cache.fingerprint(bm.root, budget)
    doc = bm.context_document(budget, explain=explain)
    context_cache.store(bm.root, budget, before, doc.text, doc.valid_until, doc.paths_checked)
    return doc


def context_text(root: str | os.PathLike[str], budget: int | None) -> str:
    """The document's text for the folder `root`: from the cache while it is still
    current, else built (and cached)."""
    cached = context_cache.lookup(root, budget)
    if cached is not None:
        return cached
    from .manager import BrainManager

    return build_and_cache(BrainManager(root), budget, explain=False).text
