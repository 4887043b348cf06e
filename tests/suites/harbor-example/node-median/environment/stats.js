"use strict";

function median(numbers) {
  const sorted = [...numbers].sort();
  return sorted[Math.floor(sorted.length / 2)];
}

module.exports = { median };
