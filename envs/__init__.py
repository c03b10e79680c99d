"""Games: one folder each, holding the specification, the rules and optional agents/renderers."""
