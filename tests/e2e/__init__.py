"""End-to-end tests: the real program on a pseudo-terminal or in tmux."""
