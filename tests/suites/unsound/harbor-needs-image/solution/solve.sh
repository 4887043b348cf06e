#!/bin/bash
/usr/games/cowsay hello > /app/cow.txt
