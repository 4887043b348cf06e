"""campaign: repeated, paired A/B trials of LLM coding agents."""

__version__ = "0.1.0"
