"""Tamper evidence: every finished attempt row is hashed and chained to the one before.

``row_hash`` is a SHA-256 over the row's hashed values plus ``prev_hash``, the
``row_hash`` of the row before it in the same campaign by ``seq``; the first
row's ``prev_hash`` is the campaign's ``experiment_digest`` (the genesis), so
the chain is also bound to the experiment it ran. ``seq`` is the order
attempts were finalized: a running row holds a provisional negative seq and is
not yet a link, so workers running providers in parallel append to one chain
without ever leaving a running row inside it (stores from before kept the seq
given at the start, which was the same order while one runner ran everything).

Two encodings of a row exist, and a row verifies when it matches the one it
was sealed with (2 is tried first):

- format 2, how this engine seals: the compact canonical JSON (ASCII, no NaN)
  of the array ``[prev_hash, <HASHED_COLUMNS values in order>]``, each value as
  the store holds it: booleans 0/1, datetimes as UTC text
  ``YYYY-MM-DD HH:MM:SS.ffffff`` (SQLite's own text; other databases' values are
  put in that form). One array per row in a fixed column order, so a whole
  campaign is checked from one query of plain tuples, with ``orjson`` doing the
  encoding where its bytes are provably the same (any row where they might not
  be is encoded again by the reference encoder);
- format 1, rows sealed before: the canonical JSON object (sorted keys) of
  ``{"prev_hash": ..., <column>: <value>}`` with each value as the models' types
  return it (datetimes ISO 8601 UTC), so an edit that changes nothing a reader
  sees (a boolean stored as 2 instead of 1) is not a change for those rows.

``seal_attempt`` runs right after ``finish_attempt`` (status ``finished``, ``faulted`` or
``interrupted``), in its own transaction, with a compare-and-set on
``row_hash IS NULL``. ``verify_chain`` recomputes everything and names each
problem: an edited row, a deleted row (a gap in ``seq``, a broken link, or a
finished trial whose attempt row is gone), a reordered row, a finished row left
unsealed, or a running row with later rows after it. Only a ``running`` row at
the end of a chain may be unsealed.

This detects edits made outside the engine (ad-hoc SQL, a restored backup
spliced with another); it is not a signature: whoever runs this code can
recompute a chain. ``private_root`` is a local path set while the attempt runs
and is never exported, so it is left out of the hash.

Adding a column to ``attempts``: rows sealed earlier were hashed without it, so
extending HASHED_COLUMNS needs a new format that verifies both shapes; the test
that compares HASHED_COLUMNS with the model fails until someone decides.

Only attempt rows are hashed; the campaign row and the trial rows a report also
reads are pinned through the genesis (``pinned``: the experiment must match its
digest, and the trial rows the schedule it rebuilds).

A chain's end is anchored outside the store: a report publishes where each chain ended
(``ends``), and ``campaign verify --against`` checks a store still holds it.

One algorithm in six parts: ``rows`` (the hashed columns, rows as stored, the
problems), ``hashing`` (both formats, pure), ``seal``, ``verify``, ``pinned`` and ``ends``;
every name a caller uses is importable from here.
"""

from campaign.store.chain.ends import ChainEnd, chain_ends, verify_against
from campaign.store.chain.hashing import canonical_row, compute_hash, fast_digests, payload, row_digest
from campaign.store.chain.rows import (
    COLUMN,
    EXCLUDED_COLUMNS,
    HASHED_COLUMNS,
    PAYLOAD,
    RAW_COLUMNS,
    ChainBroken,
    ChainProblem,
    read_rows,
    stored_form,
)
from campaign.store.chain.seal import amend_tail, seal_attempt, seal_pending
from campaign.store.chain.verify import count_rows, head, settled, verify_chain, verify_rows

__all__ = [
    "COLUMN", "EXCLUDED_COLUMNS", "HASHED_COLUMNS", "PAYLOAD", "RAW_COLUMNS", "ChainBroken", "ChainEnd", "ChainProblem",
    "amend_tail", "canonical_row", "chain_ends", "compute_hash", "count_rows", "fast_digests", "head", "payload", "read_rows",
    "row_digest", "seal_attempt", "seal_pending", "settled", "stored_form", "verify_against", "verify_chain", "verify_rows",
]  # fmt: skip
