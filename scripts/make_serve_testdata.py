"""Writes testdata/serve/: small TorchScript models the server's tests
serve (run with /usr/bin/python3, Debian's python3-torch):

  echo.pt   forward(x) -> x.clone(): any dtype, any shape
  pair.pt   forward(a, b) -> (a + b, a * b)
  spin.pt   forward(x, n) -> tanh applied n times: a run as long as asked
"""
import os
import torch

OUT = os.path.join(os.path.dirname(__file__), "..", "testdata", "serve")


class Echo(torch.nn.Module):
    def forward(self, x):
        return x.clone()


class Pair(torch.nn.Module):
    def forward(self, a, b):
        return a + b, a * b


class Spin(torch.nn.Module):
    def forward(self, x, n):
        for _ in range(int(n)):
            x = torch.tanh(x)
        return x


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    for name, m in [("echo", Echo()), ("pair", Pair()), ("spin", Spin())]:
        torch.jit.save(torch.jit.script(m.eval()), os.path.join(OUT, name + ".pt"))
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    torch.save((a, b), os.path.join(OUT, "pair.inputs.pt"))
    torch.save(Pair()(a, b), os.path.join(OUT, "pair.expected.pt"))


if __name__ == "__main__":
    main()
