#!/usr/bin/env bash
# Sum the second column of a CSV file, after its header line.
set -euo pipefail
tail -n +2 "$1" | awk -F, '{ sum += $2 } END { print sum + 0 }'
