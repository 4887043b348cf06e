"""``python -m campaign.profiler``: the per-attempt recording proxy (see proxy.py)."""

import sys

from campaign.profiler.proxy import main

sys.exit(main())
