"""Statistics: rank-based intervals of medians, ratios and differences (interval) over exact ranks
(ranks). Imports only records (text, for numbers)."""
