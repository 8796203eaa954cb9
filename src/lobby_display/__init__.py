"""lobby-display: a live queue board for waiting-room TVs."""

# The version, stated only here: pyproject.toml reads it (setuptools' dynamic version), so it
# holds in an install and in a bare copy of the package on PYTHONPATH alike.
__version__ = "0.1.0"
