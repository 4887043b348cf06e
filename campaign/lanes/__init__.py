"""Lanes: nonpaired, paired plan-only and live, campaign (admission, gates, order, stop reasons)."""
