"""Unit tests: one module at a time, no network, no terminal."""
