"""The GPU memory a workload needs: the sizing rules buyers use (bytes per parameter by task and
precision) plus a documented margin for activations and the KV cache (docs/advisor.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pipelines.advisor.workload import AdvisorError, Workload

GB = 1e9  # bytes; estimates are compared with the vendors' nominal "80 GB", a slight safety margin

# Bytes per parameter for the weights as stored, by precision.
WEIGHT_BYTES = {"fp32": 4.0, "bf16": 2.0, "int8": 1.0, "int4": 0.5}
# Mixed-precision Adam: bf16 weights 2 + bf16 gradients 2 + fp32 master weights 4 + Adam's two
# fp32 moments 8 = 16 bytes per parameter; pure fp32 Adam is 4 + 4 + 8 = 16 as well.
ADAM_TRAINING_BYTES = 16.0
# LoRA/QLoRA train adapters of about 1 % of the parameters (rank 16-64 on the attention and MLP
# projections), each with the same 16 bytes of weights, gradients and Adam state.
ADAPTER_SHARE = 0.01
# QLoRA's base weights: 4-bit NF4 (0.5 B) plus quantization constants and the layers kept in
# bf16 (embeddings, norms, output head): about 0.55 B per parameter.
QLORA_BASE_BYTES = 0.55
# Activations (training, with gradient checkpointing) and the KV cache (inference) on top of the
# weights: +20 % up to 4,096 tokens per step (batch × sequence); +10 points per doubling beyond,
# at most +100 %.
BASE_MARGIN = 0.20
MARGIN_REFERENCE_TOKENS = 4096
MARGIN_PER_DOUBLING = 0.10
MAX_MARGIN = 1.00
DEFAULT_BATCH, DEFAULT_SEQ_LEN = 1, 2048
MEMORY_NOT_MEASURED = ("memory estimated from parameters: measure it first, as the guides say "
                       "(--peak-memory-gb)")


@dataclass(frozen=True)
class Estimate:
    """GPU memory the workload needs, with the assumptions that produced it (shown to users)."""

    bytes_per_param: float
    weights_gb: float       # everything that scales with the parameter count
    margin: float           # the activation / KV-cache margin, as a share of weights_gb
    total_gb: float
    assumptions: tuple[str, ...]


def estimate_memory(workload: Workload) -> Estimate:
    """The sizing rules buyers use, plus a documented margin for activations and the KV cache."""
    task, precision, params = workload.task, workload.precision, workload.params
    notes: list[str] = []
    adapters = ADAPTER_SHARE * ADAM_TRAINING_BYTES
    if task in ("full-finetune", "pretrain"):
        if precision in ("int8", "int4"):
            raise AdvisorError(f"{task} trains every weight, which needs fp32 or bf16 precision; "
                               "for a quantized base model use --task qlora")
        bpp = ADAM_TRAINING_BYTES
        notes.append(f"{task} with Adam in {precision}: 16 B/param (weights, gradients, fp32 "
                     "master weights and two Adam moments)")
    elif task == "lora":
        if precision == "int4":
            raise AdvisorError("LoRA on a 4-bit base model is QLoRA: use --task qlora")
        bpp = WEIGHT_BYTES[precision] + adapters
        notes.append(f"LoRA: frozen base weights in {precision} ({WEIGHT_BYTES[precision]:g} "
                     f"B/param) + adapters of {ADAPTER_SHARE:.0%} of the parameters trained with "
                     f"Adam (16 B each = {adapters:.2f} B/param)")
    elif task == "qlora":
        bpp = QLORA_BASE_BYTES + adapters
        notes.append(f"QLoRA: 4-bit NF4 base weights with quantization constants "
                     f"({QLORA_BASE_BYTES} B/param) + adapters of {ADAPTER_SHARE:.0%} of the "
                     f"parameters trained with Adam ({adapters:.2f} B/param)")
        if precision != "int4":
            notes.append(f"QLoRA stores the base in 4 bits whatever the precision; {precision} "
                         "is the adapters' compute type")
    else:  # inference
        bpp = WEIGHT_BYTES[precision]
        notes.append(f"inference in {precision}: {bpp:g} B/param for the weights")
    weights_gb = params * bpp / GB
    batch = workload.batch_size or DEFAULT_BATCH
    seq = workload.seq_len or DEFAULT_SEQ_LEN
    tokens = batch * seq
    margin = BASE_MARGIN
    if tokens > MARGIN_REFERENCE_TOKENS:
        margin = min(MAX_MARGIN, BASE_MARGIN + MARGIN_PER_DOUBLING
                     * math.log2(tokens / MARGIN_REFERENCE_TOKENS))
    what = "activations (gradient checkpointing)" if workload.training else "the KV cache"
    hinted = "" if workload.batch_size or workload.seq_len else " (default hints)"
    notes.append(f"+{margin:.0%} for {what}: batch {batch} × sequence {seq} = {tokens:,} tokens"
                 f"{hinted}; +20 % up to 4,096 tokens, +10 points per doubling beyond")
    total = weights_gb * (1 + margin)
    notes.insert(0, f"{params / 1e9:g}B params × {bpp:.2f} B = {weights_gb:,.1f} GB, "
                    f"+{margin:.0%} = {total:,.1f} GB (GB = 10^9 bytes)")
    if workload.peak_memory_gb:
        notes.insert(0, f"measured peak {workload.peak_memory_gb:,.1f} GB (--peak-memory-gb) "
                        f"replaces the estimate of {total:,.1f} GB")
        total = workload.peak_memory_gb
    else:
        notes.insert(0, MEMORY_NOT_MEASURED)
    return Estimate(bpp, weights_gb, margin, total, tuple(notes))
