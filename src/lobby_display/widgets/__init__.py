"""Screen elements: each renders part of a board snapshot for one locale, never the network."""
