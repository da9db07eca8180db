class Syntax(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : NoneType
  names : List[str]
  table : Dict[str, int]
  lin : __torch__.torch.nn.modules.linear.Linear
  scorer : __torch__.Scorer
  k : Final[int] = 3
  label : Final[str] = "q\"uote\'s \\ and\ttab"
  def forward(self: __torch__.Syntax,
    x: Tensor,
    y: Optional[Tensor]=None,
    n: int=5) -> Dict[str, Tensor]:
    s = "tab\there \"quoted\" \'single\' back\\slash nl\n"
    _0 = uninitialized(int)
    _1 = uninitialized(bool)
    out = annotate(Dict[str, Tensor], {})
    if torch.eq(torch.dim(x), 2):
      pass
    else:
      _2 = torch.add("need 2-D, got ", str(torch.dim(x)))
      ops.prim.RaiseException(torch.add("AssertionError: ", _2))
    a, b, = (self).helper(x, 2., )
    if torch.__isnot__(y, None):
      y1 = unchecked_cast(Tensor, y)
      _3, y0 = torch.gt(b, 1), y1
    else:
      _3, y0 = False, y
    if _3:
      _4, y2 = True, unchecked_cast(Tensor, y0)
    else:
      _4, y2 = torch.lt(n, 0), y0
    if _4:
      if torch.__isnot__(y2, None):
        y3 = unchecked_cast(Tensor, y2)
        a1 = torch.add(a, y3)
      else:
        a1 = a
      a0 = a1
    else:
      _5 = torch.__not__(torch.__contains__([1, 2, 3], n))
      if _5:
        a2 = torch.neg(a)
      else:
        a2 = torch.pow(a, 2)
      a0 = a2
    if torch.lt(0, n):
      _6 = True
    else:
      _6 = False
    i = 0
    _7 = _6
    while _7:
      i0 = torch.add(i, 1)
      if torch.eq(i0, 3):
        if torch.lt(i0, n):
          _13 = torch.ne(i0, 7)
        else:
          _13 = False
        _8, _9, _10, _11, _12 = True, _13, i0, _1, _0
      else:
        if torch.gt(i0, 100):
          _14, _15, _16, _17, _18 = True, False, i0, _1, _0
        else:
          if torch.lt(i0, n):
            _19 = torch.ne(i0, 7)
          else:
            _19 = False
          _14, _15, _16, _17, _18 = False, _1, _0, _19, i0
        _8, _9, _10, _11, _12 = _14, _15, _16, _17, _18
      if _8:
        _20, _21 = _9, _10
      else:
        _20, _21 = _11, _12
      _7, i = _20, _21
    vals = annotate(List[float], [])
    for j in range(n):
      _22 = torch.append(vals, torch.mul(float(j), 0.5))
    m = inf
    for _23 in range(torch.len(vals)):
      v = vals[_23]
      m = ops.prim.min(m, v)
    _24 = torch.remainder(torch.floordiv(n, 2), 3)
    idx = torch.__or__(torch.__lshift__(_24, 1), 3)
    if torch.eq(torch.dim(x), 3):
      _25 = torch.slice(torch.slice(x), 1, 0, 2)
      z = torch.unsqueeze(_25, 2)
    else:
      z = torch.slice(x, -1, None, 1)
    torch._set_item(out, "a", a0)
    torch._set_item(out, "z", z)
    lin = self.lin
    torch._set_item(out, s, (lin).forward(x, ))
    scorer = self.scorer
    torch._set_item(out, "q\"uote\'s \\ and\ttab", (scorer).forward(x, ))
    _26 = __torch__.free_fn([1, 2, 3], -3, )
    if torch.le(0, idx):
      _27 = torch.lt(idx, 10)
    else:
      _27 = False
    if _27:
      torch._set_item(out, "ok", x)
    else:
      pass
    ii = torch.add(torch.sub(41, idx), 10000000000)
    if torch.ge(ii, 10000000000):
      _29 = torch.ne(ii, -1.4999999999999999e-07)
      _28 = _29
    else:
      _28 = False
    if _28:
      ops.prim.RaiseException(torch.format("too big {}", ii), "builtins.RuntimeError")
    else:
      pass
    p = (self).pair(x, )
    torch._set_item(out, "p", (p)[0])
    return out
  def helper(self: __torch__.Syntax,
    x: Tensor,
    scale: float=2.) -> Tuple[Tensor, int]:
    return (torch.mul(x, scale), torch.dim(x))
  def pair(self: __torch__.Syntax,
    x: Tensor) -> __torch__.Pair:
    if torch.gt(torch.dim(x), 1):
      _30 : Optional[Tensor] = None
    else:
      _30 = x
    return __torch__.Pair(x, _30)
class Doubler(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.Doubler,
    x: Tensor) -> Tensor:
    return torch.mul(x, 2)
class Scorer(ModuleInterface):
  def forward(self, x: Tensor) -> Tensor:
    pass
def free_fn(xs: List[int],
    k: int=-3) -> int:
  _31 = ops.prim.min([9223372036854775807, torch.len(xs)])
  total = 0
  for i in range(_31):
    v = xs[i]
    if torch.gt(v, k):
      total0 = torch.add(total, torch.mul(i, v))
    else:
      if torch.eq(v, k):
        total1 = torch.sub(total, 1)
      else:
        total1 = torch.floordiv(total, 2)
      total0 = total1
    total = total0
  return total
class Pair(NamedTuple):
  first : Tensor
  second : Optional[Tensor]
