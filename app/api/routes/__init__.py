"""One router module per resource; each route parses, calls a repository or the core, and returns."""
