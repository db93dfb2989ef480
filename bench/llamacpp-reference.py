#!/usr/bin/env python3
"""Greedy reference outputs of llama.cpp's llama-server for a GGUF file, as JSON, for small test resources.

For each prompt (token ids), the greedy continuation's ids and, at every generated position, the top candidates
with their log-probabilities (llama-server's n_probs, before sampling). The server runs on one thread with an f32
KV cache (or, with --kv q8_0, llama.cpp's 8-bit q8_0 cache with flash attention, which that cache needs), so the
numbers do not depend on the machine's thread count.

  usage: bench/llamacpp-reference.py MODEL.gguf "1,300,301;1,400,2" [-n 32] [--top 5] [--lora ADAPTER.gguf[:SCALE]]... [--kv q8_0]
         > reference.json   (each --lora applied to every prompt, at SCALE, 1 by default)
  (llama-server from LLAMA_CPP_BIN, or the directory the peer build script prints)
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request


def llama_server():
    bin_dir = os.environ.get("LLAMA_CPP_BIN")
    if not bin_dir:
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "peer",
                              "build-native.sh")
        bin_dir = subprocess.run(["bash", script], check=True, capture_output=True, text=True).stdout.strip()
    return os.path.join(bin_dir, "llama-server")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        sys.exit(f"{path}: HTTP {e.code}: {e.read().decode(errors='replace')}")


def recorded(argv):
    """The arguments as the reference records them: files by their names alone."""
    return [os.path.basename(a) if os.path.exists(a.partition(":")[0]) else a for a in argv]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("prompts", help="prompts as token ids: '1,2,3;1,5'")
    ap.add_argument("-n", type=int, default=32)
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--lora", action="append", default=[])
    ap.add_argument("--kv", choices=["f32", "f16", "q8_0", "q4_0"], default="f32")
    args = ap.parse_args()
    adapters = []
    for lora in args.lora:
        path, _, scale = lora.partition(":")
        adapters += ["--lora-scaled", path + ":" + (scale or "1")]
    cache = ["-ctk", args.kv, "-ctv", args.kv, "-fa", "off" if args.kv == "f32" else "on"]
    port = free_port()
    server = subprocess.Popen([llama_server(), "-m", args.model, "-t", "1", "-np", "1", "-c", "1024",
                               "--port", str(port), "--host", "127.0.0.1", "--no-warmup"] + cache + adapters,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        records = []
        for prompt in args.prompts.split(";"):
            ids = [int(t) for t in prompt.split(",")]
            out = post(port, "/completion", {"prompt": ids, "n_predict": args.n, "temperature": 0, "top_k": 1,
                                             "n_probs": args.top, "cache_prompt": False, "return_tokens": True,
                                             "ignore_eos": True, "samplers": ["top_k"]})
            records.append({
                "prompt_ids": ids,
                "completion_ids": out["tokens"],
                "top": [[{"id": c["id"], "logprob": c["logprob"]} for c in p["top_logprobs"]]
                        for p in out["completion_probabilities"]],
            })
        json.dump({"generator": {"model": os.path.basename(args.model),
                                 **({"lora": [os.path.basename(a) for a in args.lora]} if args.lora else {}),
                                 "command": "bench/llamacpp-reference.py " + " ".join(recorded(sys.argv[1:])),
                                 "server": "llama-server -t 1 -c 1024 " + " ".join(cache) + ", greedy"},
                   "records": records}, sys.stdout, separators=(",", ":"))
        print()
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
