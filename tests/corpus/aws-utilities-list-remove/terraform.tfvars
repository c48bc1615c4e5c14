# Our own inputs for the example (not from its repository): duplicates in the
# input, and an item to remove that is not there.
input_list      = ["a", "b", "c", "b", "d", "e", "a"]
items_to_remove = ["b", "x", "e"]
