"""Seed 004: the `.brain/` blackboard through which several agents (scout, architect,
builder, reviewer) hand work to each other, and the engine that runs them in order.

Open `engine.py` first (`Pipeline`: run, resume, cancel), then `runner.py` (how a stage's
agent is run), `prompt.py` (what it is told) and `validate.py` (what it must leave);
`state.py` and `events.py` hold pipeline-state.json and events.jsonl, `blackboard.py` the
`.brain/` files, `verdict.py` and `routing.py` the reviewer's verdict and where it sends
the pipeline, `heartbeat.py` and `watch.py` the stall check and the BACKLOG.md watcher.
The guide is docs/pipeline.md.
"""
