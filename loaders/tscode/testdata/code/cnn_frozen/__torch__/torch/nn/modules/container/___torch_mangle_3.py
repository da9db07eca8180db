class Sequential(Module):
  __parameters__ = []
  __buffers__ = []
  def forward(self: __torch__.torch.nn.modules.container.___torch_mangle_3.Sequential,
    input: Tensor) -> Tensor:
    input0 = torch.conv2d(input, CONSTANTS.c0, CONSTANTS.c1)
    input1 = torch.relu(input0)
    input2 = torch.max_pool2d(input1, [2, 2], [2, 2])
    input3 = torch.flatten(input2, 1)
    input4 = torch.linear(input3, CONSTANTS.c2, CONSTANTS.c3)
    return input4
