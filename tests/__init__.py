"""The tests, a package imported from the project's root (pyproject's pytest `pythonpath`)."""
