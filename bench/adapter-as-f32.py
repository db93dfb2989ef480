#!/usr/bin/env python3
"""Writes a GGUF LoRA adapter's tensors again as F32, the same values: llama.cpp then multiplies by them in float,
without rounding the activations to half precision as it does for F16 matrices, which is how Laneway computes a
half-precision adapter. Uses llama.cpp's own gguf-py: $GGUF_PY, else the one of the llama.cpp source whose build
$LLAMA_CPP_BIN (or the peer build script beside the checkout) names.

  usage: bench/adapter-as-f32.py ADAPTER.gguf OUT.gguf
"""
import os
import subprocess
import sys

HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gguf_py():
    if os.environ.get("GGUF_PY"):
        return os.environ["GGUF_PY"]
    bin_dir = os.environ.get("LLAMA_CPP_BIN") or subprocess.check_output(
        [os.path.join(os.path.dirname(HOME), "shared", "peer", "build-native.sh")], text=True).strip().splitlines()[-1]
    return os.path.join(bin_dir, "..", "..", "gguf-py")


sys.path.insert(0, gguf_py())
import gguf  # noqa: E402
import numpy as np  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    reader = gguf.GGUFReader(sys.argv[1])
    arch = reader.get_field("general.architecture").contents()
    writer = gguf.GGUFWriter(sys.argv[2], arch)
    for key in ("general.type", "adapter.type"):
        writer.add_string(key, reader.get_field(key).contents())
    writer.add_float32("adapter.lora.alpha", float(reader.get_field("adapter.lora.alpha").contents()))
    for t in reader.tensors:
        writer.add_tensor(t.name, np.array(t.data).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
