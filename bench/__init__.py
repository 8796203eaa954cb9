"""Benchmarks of the display against the simulator; `python -m bench` runs them all."""
