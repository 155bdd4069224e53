"""Hidden suite of the extra_trees_debug kata."""
