#!/usr/bin/env bash
# A verifier that judges the code correctly, then fails every other solved run: its
# counter lives beside the attempts' private roots ($TMPDIR is <root>/tmp), so it
# outlives each attempt. Deterministic flakiness, for the check to catch.
python3 -c 'import os, sys; sys.path.insert(0, os.getcwd()); from calc import double; assert double(4) == 8' || exit 1
counter="$TMPDIR/../../flaky-verifier-counter"
n=$(( $(cat "$counter" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$counter"
[ $((n % 2)) -eq 1 ]
