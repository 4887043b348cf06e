"""What a credential looks like, so a value that is never one can refuse to be one.

A model name is written to the store, the experiment, the approval and every
report. A key pasted into ``--model`` (or a catalog's ``default_model``) by
mistake would be copied into all of them, so such a name is refused at the door
rather than redacted afterwards. Two kinds of shape:

* the prefixes providers and code hosts put on their keys and tokens (``sk-``,
  ``AIza``, ``ghp_``, ``xoxb-``, ``hf_``, ``AKIA``, a JWT's ``eyJ``...), followed
  by a key-length tail;
* what no model name has but keys and ids do (``ID_SHAPES``): an unbroken run of
  20 letters or digits, 12 hex digits in a row, a UUID. The report's allowlist
  redacts a model name of these shapes (``report.fields.MODEL_RE`` is built from
  them), so the input rule and the report rule are one rule.
"""

from __future__ import annotations

import re

#: Key- or id-shaped runs no model name contains (regex fragments, unanchored).
ID_SHAPES = (
    r"[A-Za-z0-9]{20}",
    r"[0-9A-Fa-f]{12}",
    r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}",
)
_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9])"
    r"(?:sk-|sk_|rk_|AIza|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|hf_|AKIA|ASIA|eyJ)"
    r"[A-Za-z0-9_\-]{16,}"
)
_ID = re.compile("|".join(ID_SHAPES))


def credential_shaped(text: str) -> bool:
    """Whether ``text`` holds a run shaped like an API key, a token or an opaque id."""
    return _PREFIXED.search(text) is not None or _ID.search(text) is not None
