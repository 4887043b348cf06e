#!/bin/bash
[ -s /app/cow.txt ] && echo 1 > /logs/verifier/reward.txt
