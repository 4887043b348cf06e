"""The relational store: models, engine factory, migrations and the repository."""
