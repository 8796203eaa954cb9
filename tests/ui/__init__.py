"""The screen's tests: Textual's pilot and SVG snapshots."""
