"""BERT-base, GPT-2 small and ViT-B/16 written with torch.nn modules, layer for layer as their
reference definitions (Hugging Face's BertModel and GPT2Model, timm's / the paper's ViT-B/16),
for the peers: Debian's PyTorch has no transformers library.

The parts that decide the exported graph follow the references:
- BERT (Devlin et al. 2019; transformers' modeling_bert.py): word + position + token-type
  embeddings, layer norm (eps 1e-12); per layer separate Q, K, V projections, scores scaled by
  1/sqrt(head size), softmax, output projection, residual, layer norm; feed-forward 768 -> 3072
  with erf GELU -> 768, residual, layer norm (post-norm). Output: the last hidden state.
- GPT-2 (Radford et al. 2019; transformers' modeling_gpt2.py): token + position embeddings;
  per block layer norm (eps 1e-5), one fused QKV projection (768 -> 2304, "c_attn") split in
  three, causal mask applied with `where` against the dtype's lowest value, output projection;
  layer norm, MLP 768 -> 3072 with the tanh GELU ("gelu_new") -> 768 (pre-norm); a final layer
  norm. Output: the last hidden state (GPT2Model, no language-model head, no KV cache).
- ViT-B/16 (Dosovitskiy et al. 2021): 16x16 stride-16 patch convolution to 768, class token,
  learned position embeddings over 197 tokens, 12 pre-norm blocks (eps 1e-6) with erf GELU,
  a final layer norm, the classifier 768 -> 1000 on the class token. Output: the logits.

Weights are random (seeded), initialized as the references do (normal with std 0.02, layer
norms at one and zero), which keeps activations O(1) without calibration.
"""
import math

import torch
import torch.nn as nn

# name -> (kind, layers, hidden, heads, ffn, sequence/image, vocabulary)
CONFIGS = {
    "bert-base": dict(kind="bert", layers=12, hidden=768, heads=12, ffn=3072, seq=128,
                      vocab=30522, positions=512, type_vocab=2),
    "gpt2": dict(kind="gpt2", layers=12, hidden=768, heads=12, ffn=3072, seq=128,
                 vocab=50257, positions=1024),
    "vit-b16": dict(kind="vit", layers=12, hidden=768, heads=12, ffn=3072, image=224, patch=16,
                    classes=1000),
}


def is_transformer(name):
    return name in CONFIGS


def input_spec(name, batch):
    """(shape, dtype, input name) of the network's one input."""
    c = CONFIGS[name]
    if c["kind"] == "vit":
        return (batch, 3, c["image"], c["image"]), torch.float32, "pixel_values"
    return (batch, c["seq"]), torch.int64, "input_ids"


def reference_input(name, batch, seed):
    shape, dtype, _ = input_spec(name, batch)
    g = torch.Generator().manual_seed(seed + 2)
    if dtype == torch.int64:
        return torch.randint(0, CONFIGS[name]["vocab"], shape, generator=g, dtype=torch.int64)
    return torch.randn(shape, generator=g)


class SelfAttention(nn.Module):
    """Multi-head self-attention over (batch, tokens, hidden); Q, K, V either separate
    (BERT, ViT) or one fused projection split in three (GPT-2's c_attn)."""

    def __init__(self, hidden, heads, fused_qkv=False, causal_tokens=0):
        super().__init__()
        self.heads, self.head_size = heads, hidden // heads
        self.fused = fused_qkv
        if fused_qkv:
            self.qkv = nn.Linear(hidden, 3 * hidden)
        else:
            self.query = nn.Linear(hidden, hidden)
            self.key = nn.Linear(hidden, hidden)
            self.value = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)
        if causal_tokens:
            mask = torch.tril(torch.ones(causal_tokens, causal_tokens, dtype=torch.bool))
            self.register_buffer("causal", mask.view(1, 1, causal_tokens, causal_tokens),
                                 persistent=False)
        else:
            self.causal = None

    def split_heads(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.head_size).permute(0, 2, 1, 3)

    def forward(self, x):
        if self.fused:
            q, k, v = self.qkv(x).split(x.shape[-1], dim=2)
        else:
            q, k, v = self.query(x), self.key(x), self.value(x)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        if self.causal is not None:
            t = x.shape[1]
            lowest = scores.new_full((), torch.finfo(scores.dtype).min)
            scores = torch.where(self.causal[:, :, :t, :t], scores, lowest)
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        b, _, t, _ = ctx.shape
        return self.out(ctx.permute(0, 2, 1, 3).reshape(b, t, -1))


class PostNormLayer(nn.Module):
    """BERT's encoder layer: attention, add, norm; feed-forward, add, norm."""

    def __init__(self, c):
        super().__init__()
        self.attention = SelfAttention(c["hidden"], c["heads"])
        self.attention_norm = nn.LayerNorm(c["hidden"], eps=1e-12)
        self.intermediate = nn.Linear(c["hidden"], c["ffn"])
        self.output = nn.Linear(c["ffn"], c["hidden"])
        self.output_norm = nn.LayerNorm(c["hidden"], eps=1e-12)

    def forward(self, x):
        x = self.attention_norm(x + self.attention(x))
        return self.output_norm(x + self.output(nn.functional.gelu(self.intermediate(x))))


class PreNormBlock(nn.Module):
    """GPT-2's and ViT's block: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, c, eps, gelu, fused_qkv, causal_tokens):
        super().__init__()
        self.norm1 = nn.LayerNorm(c["hidden"], eps=eps)
        self.attention = SelfAttention(c["hidden"], c["heads"], fused_qkv, causal_tokens)
        self.norm2 = nn.LayerNorm(c["hidden"], eps=eps)
        self.fc = nn.Linear(c["hidden"], c["ffn"])
        self.proj = nn.Linear(c["ffn"], c["hidden"])
        self.gelu = gelu

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.proj(nn.functional.gelu(self.fc(self.norm2(x)), approximate=self.gelu))


class Bert(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word = nn.Embedding(c["vocab"], c["hidden"])
        self.position = nn.Embedding(c["positions"], c["hidden"])
        self.token_type = nn.Embedding(c["type_vocab"], c["hidden"])
        self.embedding_norm = nn.LayerNorm(c["hidden"], eps=1e-12)
        self.layers = nn.ModuleList(PostNormLayer(c) for _ in range(c["layers"]))

    def forward(self, input_ids):
        t = input_ids.shape[1]
        positions = torch.arange(t, dtype=torch.int64, device=input_ids.device).unsqueeze(0)
        types = torch.zeros_like(input_ids)
        x = self.embedding_norm(self.word(input_ids) + self.position(positions)
                                + self.token_type(types))
        for layer in self.layers:
            x = layer(x)
        return x


class Gpt2(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab"], c["hidden"])
        self.wpe = nn.Embedding(c["positions"], c["hidden"])
        self.blocks = nn.ModuleList(PreNormBlock(c, 1e-5, "tanh", True, c["positions"])
                                    for _ in range(c["layers"]))
        self.norm = nn.LayerNorm(c["hidden"], eps=1e-5)

    def forward(self, input_ids):
        t = input_ids.shape[1]
        positions = torch.arange(t, dtype=torch.int64, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


class ViT(nn.Module):
    def __init__(self, c):
        super().__init__()
        tokens = (c["image"] // c["patch"]) ** 2 + 1
        self.patch = nn.Conv2d(3, c["hidden"], c["patch"], c["patch"])
        self.cls_token = nn.Parameter(torch.zeros(1, 1, c["hidden"]))
        self.position = nn.Parameter(torch.zeros(1, tokens, c["hidden"]))
        self.blocks = nn.ModuleList(PreNormBlock(c, 1e-6, "none", False, 0)
                                    for _ in range(c["layers"]))
        self.norm = nn.LayerNorm(c["hidden"], eps=1e-6)
        self.head = nn.Linear(c["hidden"], c["classes"])

    def forward(self, pixel_values):
        x = self.patch(pixel_values).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.position
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


def definition(name, layers=None):
    """The network, initialized as its reference does from the current torch seed; with
    `layers` of its layers when given (the same width, heads and sequence)."""
    c = dict(CONFIGS[name])
    if layers is not None:
        c["layers"] = layers
    net = {"bert": Bert, "gpt2": Gpt2, "vit": ViT}[c["kind"]](c)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, (nn.Linear, nn.Embedding, nn.Conv2d)):
                nn.init.normal_(m.weight, 0.0, 0.02)
                if getattr(m, "bias", None) is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        if c["kind"] == "vit":
            nn.init.normal_(net.cls_token, 0.0, 0.02)
            nn.init.normal_(net.position, 0.0, 0.02)
    return net.eval()
