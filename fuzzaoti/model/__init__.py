"""What a test case is, as data and without torch: the Program (dims, inputs, op nodes, outputs,
configs), its op whitelist, affine sizes over dims, concrete shapes and bytes at a runtime size,
and the inputs a run draws."""
