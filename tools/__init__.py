"""Tools run from the project's root (`python -m tools.NAME`): README screenshots."""
