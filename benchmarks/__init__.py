"""Reproducible benchmarks of voyager-brain (run `python benchmarks/run.py`): one module per
family, the shared plan, content and timing beside them."""
