class MultiheadAttention(Module):
  __parameters__ = ["in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", ]
  __buffers__ = []
  in_proj_weight : Tensor
  q_proj_weight : NoneType
  k_proj_weight : NoneType
  v_proj_weight : NoneType
  in_proj_bias : Tensor
  training : bool
  _is_full_backward_hook : NoneType
  embed_dim : int
  kdim : int
  vdim : int
  _qkv_same_embed_dim : bool
  num_heads : int
  dropout : float
  head_dim : int
  bias_k : Optional[Tensor]
  bias_v : Optional[Tensor]
  add_zero_attn : bool
  out_proj : __torch__.torch.nn.modules.linear.NonDynamicallyQuantizableLinear
  batch_first : Final[bool] = False
  def forward(self: __torch__.torch.nn.modules.activation.MultiheadAttention,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Optional[Tensor]=None,
    need_weights: bool=True,
    attn_mask: Optional[Tensor]=None,
    average_attn_weights: bool=True) -> Tuple[Tensor, Optional[Tensor]]:
    _0 = "AssertionError: only bool and floating types of key_padding_mask are supported"
    _1 = "input not batched; expected query.dim() of 3 but got {}"
    why_not_fast_path = "non-self attention was used (query, key, and value are not the same Tensor)"
    _2 = "dtypes of query ({}) and self.in_proj_bias ({}) don\'t match"
    _3 = "dtypes of query ({}) and self.in_proj_weight ({}) don\'t match"
    why_not_fast_path0 = "some Tensor argument is neither CUDA nor CPU"
    why_not_fast_path1 = "grad is enabled and at least one of query or the input/output projection weights or biases requires_grad"
    _4 = "The fast path was not hit because {}"
    _5 = "MultiheadAttention does not support NestedTensor outside of its fast path. "
    _6 = __torch__.torch.nn.functional.multi_head_attention_forward
    _7 = uninitialized(Tuple[Tensor, Tensor])
    is_batched = torch.eq(torch.dim(query), 3)
    _8 = torch.__isnot__(key_padding_mask, None)
    if _8:
      key_padding_mask1 = unchecked_cast(Tensor, key_padding_mask)
      _kpm_dtype = ops.prim.dtype(key_padding_mask1)
      if torch.ne(_kpm_dtype, 11):
        _10 = torch.is_floating_point(key_padding_mask1)
        _9 = torch.__not__(_10)
      else:
        _9 = False
      if _9:
        ops.prim.RaiseException(_0)
      else:
        pass
      key_padding_mask0 : Optional[Tensor] = key_padding_mask1
    else:
      key_padding_mask0 = key_padding_mask
    if torch.__not__(is_batched):
      why_not_fast_path3 = torch.format(_1, torch.dim(query))
      why_not_fast_path2 = why_not_fast_path3
    else:
      if torch.__isnot__(query, key):
        _11 = True
      else:
        _11 = torch.__isnot__(key, value)
      if _11:
        why_not_fast_path4 = why_not_fast_path
      else:
        _12 = ops.prim.dtype(query)
        in_proj_bias = self.in_proj_bias
        _13 = torch.ne(_12, ops.prim.dtype(in_proj_bias))
        if _13:
          _14 = ops.prim.dtype(query)
          in_proj_bias0 = self.in_proj_bias
          why_not_fast_path6 = torch.format(_2, _14, ops.prim.dtype(in_proj_bias0))
          why_not_fast_path5 = why_not_fast_path6
        else:
          _15 = ops.prim.dtype(query)
          in_proj_weight = self.in_proj_weight
          _16 = ops.prim.dtype(in_proj_weight)
          if torch.ne(_15, _16):
            _17 = ops.prim.dtype(query)
            in_proj_weight0 = self.in_proj_weight
            _18 = ops.prim.dtype(in_proj_weight0)
            why_not_fast_path7 = torch.format(_3, _17, _18)
          else:
            training = self.training
            if training:
              why_not_fast_path8 = "training is enabled"
            else:
              why_not_fast_path8 = "batch_first was not True"
            why_not_fast_path7 = why_not_fast_path8
          why_not_fast_path5 = why_not_fast_path7
        why_not_fast_path4 = why_not_fast_path5
      why_not_fast_path2 = why_not_fast_path4
    _19 = torch.gt(torch.len(why_not_fast_path2), 0)
    if torch.__not__(_19):
      in_proj_weight1 = self.in_proj_weight
      in_proj_bias1 = self.in_proj_bias
      out_proj = self.out_proj
      weight = out_proj.weight
      out_proj0 = self.out_proj
      bias = out_proj0.bias
      _22 = annotate(List[bool], [])
      if ops.prim.is_cuda(query):
        _23 = True
      else:
        _24 = str(ops.prim.device(query))
        _25 = torch.find(_24, "cpu", 0, torch.len(_24))
        _23 = torch.ne(_25, -1)
      _26 = torch.append(_22, _23)
      if ops.prim.is_cuda(key):
        _27 = True
      else:
        _28 = str(ops.prim.device(key))
        _29 = torch.find(_28, "cpu", 0, torch.len(_28))
        _27 = torch.ne(_29, -1)
      _30 = torch.append(_22, _27)
      if ops.prim.is_cuda(value):
        _31 = True
      else:
        _32 = str(ops.prim.device(value))
        _33 = torch.find(_32, "cpu", 0, torch.len(_32))
        _31 = torch.ne(_33, -1)
      _34 = torch.append(_22, _31)
      if ops.prim.is_cuda(in_proj_weight1):
        _35 = True
      else:
        _36 = ops.prim.device(in_proj_weight1)
        _37 = str(_36)
        _38 = torch.find(_37, "cpu", 0, torch.len(_37))
        _35 = torch.ne(_38, -1)
      _39 = torch.append(_22, _35)
      if ops.prim.is_cuda(in_proj_bias1):
        _40 = True
      else:
        _41 = str(ops.prim.device(in_proj_bias1))
        _42 = torch.find(_41, "cpu", 0, torch.len(_41))
        _40 = torch.ne(_42, -1)
      _43 = torch.append(_22, _40)
      if ops.prim.is_cuda(weight):
        _44 = True
      else:
        _45 = str(ops.prim.device(weight))
        _46 = torch.find(_45, "cpu", 0, torch.len(_45))
        _44 = torch.ne(_46, -1)
      _47 = torch.append(_22, _44)
      if ops.prim.is_cuda(bias):
        _48 = True
      else:
        _49 = str(ops.prim.device(bias))
        _50 = torch.find(_49, "cpu", 0, torch.len(_49))
        _48 = torch.ne(_50, -1)
      _51 = torch.append(_22, _48)
      if torch.__not__(torch.all(_22)):
        why_not_fast_path10 = why_not_fast_path0
      else:
        if torch.is_grad_enabled():
          _53 = annotate(List[bool], [])
          _54 = torch.append(_53, ops.prim.requires_grad(query))
          _55 = torch.append(_53, ops.prim.requires_grad(key))
          _56 = torch.append(_53, ops.prim.requires_grad(value))
          _57 = ops.prim.requires_grad(in_proj_weight1)
          _58 = torch.append(_53, _57)
          _59 = ops.prim.requires_grad(in_proj_bias1)
          _60 = torch.append(_53, _59)
          _61 = ops.prim.requires_grad(weight)
          _62 = torch.append(_53, _61)
          _63 = torch.append(_53, ops.prim.requires_grad(bias))
          _52 = torch.any(_53)
        else:
          _52 = False
        if _52:
          why_not_fast_path11 = why_not_fast_path1
        else:
          why_not_fast_path11 = why_not_fast_path2
        why_not_fast_path10 = why_not_fast_path11
      _64 = torch.gt(torch.len(why_not_fast_path10), 0)
      if torch.__not__(_64):
        embed_dim = self.embed_dim
        num_heads = self.num_heads
        in_proj_weight2 = self.in_proj_weight
        in_proj_bias2 = self.in_proj_bias
        out_proj1 = self.out_proj
        weight0 = out_proj1.weight
        out_proj2 = self.out_proj
        bias0 = out_proj2.bias
        _67 = torch.__isnot__(key_padding_mask0, None)
        if _67:
          key_padding_mask5 = unchecked_cast(Tensor, key_padding_mask0)
          key_padding_mask4, _68 = key_padding_mask5, key_padding_mask5
        else:
          key_padding_mask4, _68 = key_padding_mask0, attn_mask
        _69 = torch.__isnot__(key_padding_mask4, None)
        if _69:
          key_padding_mask7 = unchecked_cast(Tensor, key_padding_mask4)
          _70, key_padding_mask6, attn_mask2 = 1, key_padding_mask7, attn_mask
        else:
          _71 = torch.__isnot__(attn_mask, None)
          if _71:
            attn_mask4 = unchecked_cast(Tensor, attn_mask)
            _72, attn_mask3 = 0, attn_mask4
          else:
            _72, attn_mask3 = None, attn_mask
          _70, key_padding_mask6, attn_mask2 = _72, key_padding_mask4, attn_mask3
        _73, _74 = torch._native_multi_head_attention(query, key, value, embed_dim, num_heads, in_proj_weight2, in_proj_bias2, weight0, bias0, _68, need_weights, average_attn_weights, _70)
        _65, _66, key_padding_mask3, attn_mask1 = True, (_73, _74), key_padding_mask6, attn_mask2
      else:
        _65, _66, key_padding_mask3, attn_mask1 = False, _7, key_padding_mask0, attn_mask
      _20, _21, why_not_fast_path9, key_padding_mask2, attn_mask0 = _65, _66, why_not_fast_path10, key_padding_mask3, attn_mask1
    else:
      _20, _21, why_not_fast_path9, key_padding_mask2, attn_mask0 = False, _7, why_not_fast_path2, key_padding_mask0, attn_mask
    if _20:
      _75 = _21
    else:
      if ops.prim.is_nested(query):
        _76 = True
      else:
        _76 = ops.prim.is_nested(key)
      if _76:
        any_nested = True
      else:
        any_nested = ops.prim.is_nested(value)
      if torch.__not__(any_nested):
        pass
      else:
        _77 = torch.format(_4, why_not_fast_path9)
        _78 = torch.add("AssertionError: ", torch.add(_5, _77))
        ops.prim.RaiseException(_78)
      _qkv_same_embed_dim = self._qkv_same_embed_dim
      _79 = torch.__not__(_qkv_same_embed_dim)
      if _79:
        embed_dim0 = self.embed_dim
        num_heads0 = self.num_heads
        in_proj_weight3 = self.in_proj_weight
        in_proj_bias3 = self.in_proj_bias
        bias_k = self.bias_k
        bias_v = self.bias_v
        add_zero_attn = self.add_zero_attn
        dropout = self.dropout
        out_proj3 = self.out_proj
        weight1 = out_proj3.weight
        out_proj4 = self.out_proj
        bias1 = out_proj4.bias
        training0 = self.training
        q_proj_weight = self.q_proj_weight
        k_proj_weight = self.k_proj_weight
        v_proj_weight = self.v_proj_weight
        _80 = _6(query, key, value, embed_dim0, num_heads0, in_proj_weight3, in_proj_bias3, bias_k, bias_v, add_zero_attn, dropout, weight1, bias1, training0, key_padding_mask2, need_weights, attn_mask0, True, q_proj_weight, k_proj_weight, v_proj_weight, None, None, average_attn_weights, )
        attn_output0, attn_output_weights0, = _80
        attn_output, attn_output_weights = attn_output0, attn_output_weights0
      else:
        embed_dim1 = self.embed_dim
        num_heads1 = self.num_heads
        in_proj_weight4 = self.in_proj_weight
        in_proj_bias4 = self.in_proj_bias
        bias_k0 = self.bias_k
        bias_v0 = self.bias_v
        add_zero_attn0 = self.add_zero_attn
        dropout0 = self.dropout
        out_proj5 = self.out_proj
        weight2 = out_proj5.weight
        out_proj6 = self.out_proj
        bias2 = out_proj6.bias
        training1 = self.training
        _81 = _6(query, key, value, embed_dim1, num_heads1, in_proj_weight4, in_proj_bias4, bias_k0, bias_v0, add_zero_attn0, dropout0, weight2, bias2, training1, key_padding_mask2, need_weights, attn_mask0, False, None, None, None, None, None, average_attn_weights, )
        attn_output1, attn_output_weights1, = _81
        attn_output, attn_output_weights = attn_output1, attn_output_weights1
      _82 = (attn_output, attn_output_weights)
      _75 = _82
    return _75
