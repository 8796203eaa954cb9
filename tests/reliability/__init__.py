"""Reliability tests: faults, hostile data and bad files, and the soak."""
