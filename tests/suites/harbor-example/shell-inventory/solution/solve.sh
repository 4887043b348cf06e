#!/bin/bash
cat /app/data/*.txt | awk '{ total[$1] += $2 } END { for (item in total) print item, total[item] }' | sort > /app/report.txt
