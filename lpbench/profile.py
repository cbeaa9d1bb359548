"""Measured batch timings of a decoder-only transformer (``lpbench profile``), in the CSV layout that
``lpbench calibrate`` reads (lpbench timings v1, see :mod:`lpbench.calibrate`).

The model is a Llama-architecture decoder built from its config (hidden size, MLP size, layers,
query and KV heads, vocabulary) with random weights: timings do not depend on weight values, and
nothing is downloaded. It is written here in plain torch, not taken from ``transformers``, because a
*mixed* batch of the batch model (seed 003 §2: prefills and decodes in one iteration) packs every
request's new tokens into one matrix for the linear layers and gives each request attention over its
own KV cache; a padded Hugging Face forward cannot express that without dense cross-request masks,
which would time work that no serving engine does. One iteration = embedding, per layer RMSNorm ->
QKV projection -> rotary embedding -> KV write -> attention per request group (torch SDPA; grouped
queries for GQA) -> output projection -> RMSNorm -> SwiGLU MLP, final norm and the LM head on the
tokens that sample (last prefill token, each decode), as vLLM/Sarathi iterations do.

Timing: for every grid point, ``warmup`` untimed iterations, then ``repeats`` timed ones; every
repeat is one CSV row (calibrate takes their median). On CUDA the iteration is captured once in a
CUDA graph and each timed replay is bracketed by CUDA events (``--no-graph``: eager, timed the same
way). Decision: graphs by default, because serving engines (vLLM, whose timings InferMax fits) replay
decode iterations from CUDA graphs; eager PyTorch issues ~40 kernels per layer from Python, and a
first H100 run measured that launch overhead (~19 ms for any decode batch of Llama-2-7B), not the
GPU. On CPU each iteration is bracketed by ``perf_counter``. Grid points whose KV cache would exceed
``--kv-budget`` GiB are skipped and reported.

Runnable without the rest of lpbench's dependencies: ``python -m lpbench.profile --shape tiny``.
"""
from __future__ import annotations

import argparse
import math
import sys
import time

from .errors import InputError

#: Hugging Face config fields of each shape (config.json of the public checkpoints; weights not needed)
SHAPES = {
    "tiny": dict(hidden_size=64, intermediate_size=172, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=512),
    "llama2-7b": dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32,
                      num_key_value_heads=32, vocab_size=32000),
    "llama3-8b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                      num_key_value_heads=8, vocab_size=128256),
    "llama2-13b": dict(hidden_size=5120, intermediate_size=13824, num_hidden_layers=40, num_attention_heads=40,
                       num_key_value_heads=40, vocab_size=32000),
}
COLUMNS = ("n_prefill", "prefill_tokens", "prefill_context", "n_decode", "decode_context", "time_s",
           "repeat", "shape", "device", "dtype", "torch", "mode")


def grid(shape: str) -> list[tuple[int, int, int, int, int]]:
    """(n_prefill, prefill_tokens, prefill_context, n_decode, decode_context) points: prefills of
    several sizes, chunked prefills on a cached context, decodes over batch and context, and mixed
    iterations (one prefill chunk with a decode batch, Sarathi-style)."""
    if shape == "tiny":
        pre = [(n, c, 0, 0, 0) for n in (1, 2) for c in (8, 32, 64)] + [(1, 32, 64, 0, 0)]
        dec = [(0, 0, 0, n, m) for n in (1, 4, 8) for m in (16, 64, 128)]
        mix = [(1, c, 0, n, 64) for c in (16, 64) for n in (2, 8)]
        return pre + dec + mix
    pre = [(n, c, 0, 0, 0) for n in (1, 2, 4, 8) for c in (128, 512, 1024, 2048) if n * c <= 8192]
    pre += [(1, c, m, 0, 0) for c in (256, 1024) for m in (1024, 3072)]
    dec = [(0, 0, 0, n, m) for n in (1, 8, 16, 32, 64, 128) for m in (128, 512, 1024, 2048, 4000)]
    mix = [(1, c, m, n, 1024) for c in (256, 1024) for m in (0, 1024) for n in (8, 32)]
    return pre + dec + mix


def _torch():
    try:
        import torch
    except ModuleNotFoundError:
        raise InputError("profile: needs torch (pip install 'lpbench[profile]')") from None
    return torch


class Decoder:
    """A Llama-architecture decoder with random weights and one forward: :meth:`iteration`."""

    def __init__(self, cfg: dict, device: str, dtype, seed: int = 0):
        torch = self.torch = _torch()
        g = torch.Generator(device=device).manual_seed(seed)
        d, f, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
        self.h, self.kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
        self.hd = d // self.h
        self.cfg, self.device, self.dtype = cfg, device, dtype

        def w(*shape):
            return (torch.randn(*shape, generator=g, device=device, dtype=dtype) / math.sqrt(shape[-1]))

        self.embed = w(cfg["vocab_size"], d)
        self.layers = [dict(norm1=torch.ones(d, device=device, dtype=dtype),
                            qkv=w((self.h + 2 * self.kv) * self.hd, d), o=w(d, self.h * self.hd),
                            norm2=torch.ones(d, device=device, dtype=dtype),
                            gate_up=w(2 * f, d), down=w(d, f)) for _ in range(L)]
        self.norm = torch.ones(d, device=device, dtype=dtype)
        self.lm_head = w(cfg["vocab_size"], d)
        inv = 1.0 / (10000.0 ** (torch.arange(0, self.hd, 2, device=device, dtype=torch.float32) / self.hd))
        self.inv_freq = inv

    def kv_bytes(self, tokens: int) -> int:
        return 2 * self.cfg["num_hidden_layers"] * self.kv * self.hd * tokens * self.torch.finfo(self.dtype).bits // 8

    def _rms(self, x, w):
        torch = self.torch
        v = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(v + 1e-5)).to(x.dtype) * w

    def _rope(self, x, rot):
        torch = self.torch
        cos, sin = rot
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1).flatten(-2)

    def make_batch(self, n_p: int, c_p: int, m_p: int, n_d: int, m_d: int):
        """Token ids, positions and a random KV cache per layer for each group (prefill, decode)."""
        torch = self.torch
        groups = []
        for n, c, m in ((n_p, c_p, m_p), (n_d, 1, m_d)):
            if n == 0:
                continue
            ids = torch.randint(0, self.cfg["vocab_size"], (n, c), device=self.device)
            ang = torch.arange(m, m + c, device=self.device).float()[:, None] * self.inv_freq  # (c, hd/2)
            rot = (torch.cos(ang).to(self.dtype), torch.sin(ang).to(self.dtype))  # computed once, as engines do
            cache = [(torch.randn(n, self.kv, m + c, self.hd, device=self.device, dtype=self.dtype),
                      torch.randn(n, self.kv, m + c, self.hd, device=self.device, dtype=self.dtype))
                     for _ in self.layers]
            mask = None
            if m > 0 and c > 1:  # queries m..m+c-1 see keys 0..m+i (bottom-right causal)
                mask = torch.ones(c, m + c, dtype=torch.bool, device=self.device).tril(diagonal=m)
            groups.append(dict(n=n, c=c, m=m, ids=ids, rot=rot, cache=cache, mask=mask))
        return groups

    def iteration(self, groups):
        """One batch-model iteration: every group's new tokens packed through the linear layers."""
        torch = self.torch
        F = torch.nn.functional
        x = torch.cat([self.embed[g["ids"].reshape(-1)] for g in groups])  # (T, d) packed tokens
        for li, layer in enumerate(self.layers):
            h = self._rms(x, layer["norm1"])
            qkv = h @ layer["qkv"].T
            outs, off = [], 0
            for g in groups:
                n, c, m = g["n"], g["c"], g["m"]
                part = qkv[off:off + n * c].view(n, c, self.h + 2 * self.kv, self.hd).transpose(1, 2)
                off += n * c
                q = self._rope(part[:, :self.h], g["rot"])
                k = self._rope(part[:, self.h:self.h + self.kv], g["rot"])
                kc, vc = g["cache"][li]
                kc[:, :, m:m + c] = k  # the KV write of this iteration
                vc[:, :, m:m + c] = part[:, self.h + self.kv:]
                kw = {"attn_mask": g["mask"]} if g["mask"] is not None else {"is_causal": c > 1}
                if self.kv != self.h:  # grouped-query attention, without copying the cache where torch can
                    try:
                        a = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True, **kw)
                    except TypeError:  # torch < 2.5
                        rep = self.h // self.kv
                        a = F.scaled_dot_product_attention(q, kc.repeat_interleave(rep, 1),
                                                           vc.repeat_interleave(rep, 1), **kw)
                else:
                    a = F.scaled_dot_product_attention(q, kc, vc, **kw)
                outs.append(a.transpose(1, 2).reshape(n * c, self.h * self.hd))
            x = x + torch.cat(outs) @ layer["o"].T
            h = self._rms(x, layer["norm2"])
            gu = h @ layer["gate_up"].T
            gate, up = gu.chunk(2, -1)
            x = x + (F.silu(gate) * up) @ layer["down"].T
        last, off = [], 0
        for g in groups:  # the tokens that sample: the last of each prefill, every decode
            n, c = g["n"], g["c"]
            last.append(x[off:off + n * c].view(n, c, -1)[:, -1])
            off += n * c
        return self._rms(torch.cat(last), self.norm) @ self.lm_head.T


def _timed_step(torch, model: Decoder, groups, device: str, graph: bool, warmup: int):
    """After the warm-up, a function that runs one iteration and returns its time in seconds."""
    if device != "cuda":
        for _ in range(warmup):
            model.iteration(groups)

        def step():
            t0 = time.perf_counter()
            model.iteration(groups)
            return time.perf_counter() - t0
        return step
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as graph capture requires
        for _ in range(max(warmup, 1)):
            model.iteration(groups)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    run = lambda: model.iteration(groups)  # noqa: E731
    if graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            model.iteration(groups)
        run = g.replay
        run()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def step():
        start.record()
        run()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e-3
    return step


def run_profile(shape: str, device: str, dtype_name: str | None, warmup: int, repeats: int,
                kv_budget_gib: float, log=print, graph: bool = True) -> list[dict]:
    torch = _torch()
    if shape not in SHAPES:
        raise InputError(f"--shape: must be one of {', '.join(SHAPES)}, got {shape!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("--device cuda: torch finds no CUDA device; use --device cpu")
    dtype_name = dtype_name or ("float16" if device == "cuda" else "float32")
    dtype = getattr(torch, dtype_name, None)
    if not isinstance(dtype, torch.dtype):
        raise InputError(f"--dtype: must be a torch floating dtype (float16, bfloat16, float32), got {dtype_name!r}")
    torch.manual_seed(0)
    model = Decoder(SHAPES[shape], device, dtype)
    name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    log(f"profile: {shape} on {name} ({dtype_name}, {'CUDA graph' if graph and device == 'cuda' else 'eager'}), "
        f"{len(grid(shape))} grid points, "
        f"{warmup} warm-up + {repeats} timed iterations each")
    rows = []
    with torch.inference_mode():
        for point in grid(shape):
            n_p, c_p, m_p, n_d, m_d = point
            kv = model.kv_bytes(n_p * (m_p + c_p) + n_d * (m_d + 1))
            if kv > kv_budget_gib * 2**30:
                log(f"  skip {point}: KV cache {kv / 2**30:.1f} GiB > --kv-budget {kv_budget_gib:g} GiB")
                continue
            groups = model.make_batch(*point)
            step = _timed_step(torch, model, groups, device, graph, warmup)
            times = [step() for _ in range(repeats)]
            for r, t in enumerate(times):
                rows.append(dict(n_prefill=n_p, prefill_tokens=c_p, prefill_context=m_p, n_decode=n_d,
                                 decode_context=m_d, time_s=f"{t:.9f}", repeat=r, shape=shape, device=name,
                                 dtype=dtype_name, torch=torch.__version__,
                                 mode="graph" if graph and device == "cuda" else "eager"))
            log(f"  {point}: median {sorted(times)[len(times) // 2] * 1e3:.3f} ms")
            del groups, step
            if device == "cuda":
                torch.cuda.empty_cache()
    return rows


def to_csv(rows: list[dict]) -> str:
    lines = [",".join(COLUMNS)]
    lines += [",".join(str(r[c]).replace(",", ";") for c in COLUMNS) for r in rows]
    return "\n".join(lines) + "\n"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--shape", default="tiny", help=f"model shape: {', '.join(SHAPES)} (default tiny)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--dtype", help="torch dtype (default float16 on cuda, float32 on cpu)")
    p.add_argument("--warmup", type=int, default=3, help="untimed iterations per grid point (default 3)")
    p.add_argument("--repeats", type=int, default=5, help="timed iterations per grid point (default 5)")
    p.add_argument("--kv-budget", type=float, default=40.0, help="skip points whose KV cache exceeds this (GiB)")
    p.add_argument("--no-graph", action="store_true", help="cuda: time eager iterations, not CUDA-graph replays")
    p.add_argument("--out", required=True, help="timings CSV to write")
    p.add_argument("--force", action="store_true", help="allow --out to overwrite an existing file")


def cmd_profile(args) -> int:
    from pathlib import Path

    from .outputs import write_text

    if args.warmup < 0 or args.repeats < 1:
        raise InputError(f"--warmup >= 0 and --repeats >= 1 required, got {args.warmup}, {args.repeats}")
    if Path(args.out).exists() and not args.force:
        raise InputError(f"--out: {args.out} already exists; choose another path or pass --force to overwrite")
    rows = run_profile(args.shape, args.device, args.dtype, args.warmup, args.repeats, args.kv_budget,
                       log=lambda s: print(f"lpbench: {s}", file=sys.stderr, flush=True), graph=not args.no_graph)
    write_text(args.out, to_csv(rows), force=args.force)
    print(f"{args.out}: {len(rows)} timed iterations ({args.shape}, {args.device})")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m lpbench.profile", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    args = p.parse_args(argv)
    try:
        return cmd_profile(args)
    except InputError as e:
        for line in e.lines():
            print(f"lpbench: {line}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
