"""Cases for the native ops real models' code calls (the zoo-lang helper):
tensor factories on another tensor (new_zeros, ...), list sums and
metadata queries folded into branches."""
from typing import List

import torch
from torch import nn

from op_cases import case, r, pos, ints, Call


class NewFactories(nn.Module):
    def forward(self, x):
        a = x.new_zeros([2, 3])
        b = x.new_ones([3], dtype=torch.int64)
        c = x.new_full([2, 2], 2.5)
        d = x.new_empty([0, 4])
        return a, b, c, d


class NewFull(nn.Module):
    def forward(self, x):
        n = x.size(0)
        return x.new_full([n, 2], 2.5), x.new_zeros([n])


class ListSum(nn.Module):
    def forward(self, x):
        s: List[int] = []
        for d in x.size():
            s.append(d)
        return x * sum(s)


case("lang_new_factories", lambda: (NewFactories(), [r(2, 2)]), noncontig=False)
case("lang_new_full_int", lambda: (NewFull(), [ints(0, 5, 3)]), noncontig=False)
case("lang_sum_list", lambda: (ListSum(), [r(2, 3)]), noncontig=False)
