"""Desktop views: one widget per module (the diff review view, ...)."""
