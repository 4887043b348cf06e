"""The relational store: models, engine factory, migrations and the repository."""

# The store's file name inside a campaign's --output-dir.
STORE_NAME = "campaign.db"
