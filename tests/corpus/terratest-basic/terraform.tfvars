# Our own inputs for the example (not from its repository); its own
# varfile.tfvars (example2 = "test") is passed with -var-file after this file.
example      = "corpus"
example_list = ["a", "b", "c"]
example_map = {
  expected = "this"
  key      = "value"
}
example_any = {
  nested = { list = [1, 2.5, "three"], flag = true }
  empty  = null
}
