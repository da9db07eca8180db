class Sequential(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  __annotations__["0"] = __torch__.torch.nn.modules.conv.___torch_mangle_10.Conv2d
  __annotations__["1"] = __torch__.torch.nn.modules.batchnorm.___torch_mangle_11.BatchNorm2d
  __annotations__["2"] = __torch__.torch.nn.modules.activation.___torch_mangle_12.ReLU
  __annotations__["3"] = __torch__.torch.nn.modules.pooling.___torch_mangle_13.MaxPool2d
  __annotations__["4"] = __torch__.torch.nn.modules.flatten.___torch_mangle_14.Flatten
  __annotations__["5"] = __torch__.torch.nn.modules.linear.___torch_mangle_15.Linear
  def forward(self: __torch__.torch.nn.modules.container.___torch_mangle_16.Sequential,
    input: Tensor) -> Tensor:
    _5 = getattr(self, "5")
    _4 = getattr(self, "4")
    _3 = getattr(self, "3")
    _2 = getattr(self, "2")
    _1 = getattr(self, "1")
    _0 = getattr(self, "0")
    _6 = (_1).forward((_0).forward(input, ), )
    _7 = (_4).forward((_3).forward((_2).forward(_6, ), ), )
    return (_5).forward(_7, )
