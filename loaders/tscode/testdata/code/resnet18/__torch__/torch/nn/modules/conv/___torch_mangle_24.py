class Conv2d(Module):
  __parameters__ = ["weight", "bias", ]
  __buffers__ = []
  weight : Tensor
  bias : Optional[Tensor]
  training : bool
  _is_full_backward_hook : NoneType
  transposed : bool
  _reversed_padding_repeated_twice : List[int]
  out_channels : Final[int] = 64
  padding : Final[Tuple[int, int]] = (3, 3)
  stride : Final[Tuple[int, int]] = (2, 2)
  in_channels : Final[int] = 3
  padding_mode : Final[str] = "zeros"
  groups : Final[int] = 1
  dilation : Final[Tuple[int, int]] = (1, 1)
  output_padding : Final[Tuple[int, int]] = (0, 0)
  kernel_size : Final[Tuple[int, int]] = (7, 7)
  def forward(self: __torch__.torch.nn.modules.conv.___torch_mangle_24.Conv2d,
    input: Tensor) -> Tensor:
    weight = self.weight
    bias = self.bias
    _0 = (self)._conv_forward(input, weight, bias, )
    return _0
  def _conv_forward(self: __torch__.torch.nn.modules.conv.___torch_mangle_24.Conv2d,
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor]) -> Tensor:
    _1 = torch.conv2d(input, weight, bias, [2, 2], [3, 3], [1, 1])
    return _1
