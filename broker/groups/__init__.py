"""Group coordination: classic consumer groups, committed offsets, share groups."""
