"""Integration tests: against the embedded simulator over real HTTP on 127.0.0.1."""
