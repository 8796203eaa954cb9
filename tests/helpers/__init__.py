"""What several tests share, imported as `tests.helpers.NAME` (none of it is collected as tests)."""
