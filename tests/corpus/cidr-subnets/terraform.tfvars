# Our own inputs for the module (not from its repository): named and
# unnamed networks of different sizes, so the unnamed ones still take
# address space but stay out of network_cidr_blocks.
base_cidr_block = "10.0.0.0/8"
networks = [
  { name = "foo", new_bits = 8 },
  { name = null, new_bits = 8 },
  { name = "baz", new_bits = 4 },
  { name = "beep", new_bits = 8 },
  { name = "boop", new_bits = 8 },
  { name = null, new_bits = 12 },
]
