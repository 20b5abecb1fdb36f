"""Seed 004: the `.brain/` blackboard through which several agents (scout, architect,
builder, reviewer) hand work to each other, and the engine that runs them in order.

Open `state.py` first (pipeline-state.json and its events), then `blackboard.py` (the
`.brain/` files: creating them, PROJECT.md's bootstrap, what goes into prompts),
`verdict.py` (the reviewer's verdict: structured output or REVIEW.md) and `routing.py`
(where the pipeline goes after a verdict). The engine that runs the stages is to come
(issue 15).
"""
