#!/usr/bin/env python3
"""Laneway against llama.cpp on the same GGUF files, side by side.

For each model file, Laneway serves the container packed at equal bits per weight (Q8_0 -> q8, Q4_0 and Q4_1 ->
q4_1, F32 -> f32; a K-quant mix as pack packs it by default, each matrix at its bits: Q4_K -> Q4_K tiles, other
blocks -> q8), and the two engines run alternately, ROUNDS times each. Each round is a median of REPS
repetitions inside the engine (llama-bench -r, laneway bench -r). The table gives the median over rounds, the
ratio of those medians, the median of the rounds' own ratios (each round pairs runs made minutes apart, which a
machine whose memory bandwidth drifts between runs compares more fairly), and each engine's peak RSS.

  pp: prompt processing of P tokens (llama-bench -p P -n 0; laneway bench -p P).
  tg: generation of N tokens after a P-token prompt (llama-bench -p 0 -n N -d P; laneway bench -p P -n N).

  --kv q8: both engines keep the KV cache at eight bits (laneway --opt kv=q8; llama-bench -ctk q8_0 -ctv q8_0 -fa 1),
  where by default both keep it in half precision.

usage: bench/compare.py [--rounds 3] [--reps 5] [-p 128] [-n 64] [--threads 2] [--kv f16|q8] [--laneway-opt K=V]...
       MODEL.gguf...
The llama.cpp binaries come from $LLAMA_CPP_BIN, else from the peer build script beside the checkout.
Output format (stable, one row per model and test):
  | model | quant | test | laneway tok/s | llama.cpp tok/s | ratio | paired ratio | laneway RSS MiB | llama.cpp RSS MiB |

With --routes, Laneway's own routes are compared instead, on the same weights: the private dx route (--opt dx=on),
the fast lane (the container packed with --lane) and the model-generic route (--opt dx=off), opened side by side in
one process (laneway bench --vs) whose runs alternate between them; ROUNDS such processes. Figures are medians of all
runs; ratios are medians of the ratios of runs made in the same round of alternation. llama.cpp is not run.
  | model | quant | test | dx tok/s | fastlane tok/s | generic tok/s | dx / generic | fastlane / dx | RSS MiB, all three |
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Files of mixed block types (the K-quant mixes) are packed with pack's default: each matrix keeps its bits.
QUANT_OF_FILE_TYPE = {0: "f32", 1: "bf16", 2: "q4_1", 3: "q4_1", 7: "q8", 14: "default", 15: "default",
                      16: "default", 17: "default", 18: "default"}
FILE_TYPE_NAME = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
                  17: "Q5_K_M", 18: "Q6_K"}


def run_measured(cmd):
    """Runs a command under wait4 so its own peak RSS is known."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), err.decode(errors="replace")[-2000:]))
    return out.decode(), usage.ru_maxrss / 1024.0


def llama_bin():
    if os.environ.get("LLAMA_CPP_BIN"):
        return os.environ["LLAMA_CPP_BIN"]
    script = os.path.join(os.path.dirname(HOME), "shared", "peer", "build-native.sh")
    return subprocess.check_output([script], text=True).strip().splitlines()[-1]


def file_type(gguf):
    out, _ = run_measured([os.path.join(HOME, "laneway"), "inspect", gguf])
    for line in out.splitlines():
        if line.strip().startswith("general.file_type = "):
            return int(line.split("=")[1])
    return 0


def pack(gguf, quant, cache, lane=False):
    target = os.path.join(cache, "%s-%s%s" % (os.path.basename(gguf).rsplit(".", 1)[0], quant, "-lane" if lane else ""))
    if not os.path.isdir(target):
        run_measured([os.path.join(HOME, "laneway"), "pack", gguf, "-o", target]
                     + (["--quant", quant] if quant != "default" else []) + (["--lane"] if lane else []))
    return target


def laneway_round(container, args, opts=()):
    cmd = [os.path.join(HOME, "laneway"), "bench", "-m", container, "-p", str(args.p), "-n", str(args.n),
           "-r", str(args.reps), "--json", "--opt", "threads=%d" % args.threads, "--opt", "kv=%s" % args.kv]
    for opt in list(args.laneway_opt) + list(opts):
        cmd += ["--opt", opt]
    out, rss = run_measured(cmd)
    result = json.loads(out.strip().splitlines()[-1])
    return result["pp_tok_s"], result["tg_tok_s"], rss, result["pp_runs"], result["tg_runs"]


def llama_round(binary, gguf, args):
    bench = os.path.join(binary, "llama-bench")
    common = ["-m", gguf, "-t", str(args.threads), "-r", str(args.reps), "-o", "json"]
    if args.kv == "q8":
        common += ["-ctk", "q8_0", "-ctv", "q8_0", "-fa", "1"]
    pp_out, rss_pp = run_measured([bench] + common + ["-p", str(args.p), "-n", "0"])
    tg_out, rss_tg = run_measured([bench] + common + ["-p", "0", "-n", str(args.n), "-d", str(args.p)])
    pp = json.loads(pp_out)[0]["avg_ts"]
    tg = json.loads(tg_out)[0]["avg_ts"]
    return pp, tg, max(rss_pp, rss_tg)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("-p", type=int, default=128)
    parser.add_argument("-n", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--kv", choices=["f16", "q8"], default="f16")
    parser.add_argument("--laneway-opt", action="append", default=[])
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "laneway-compare"))
    parser.add_argument("--routes", action="store_true", help="compare the dx, fast lane and generic routes")
    args = parser.parse_args()
    if args.routes:
        compare_routes(args)
        return
    binary = llama_bin()
    os.makedirs(args.cache, exist_ok=True)
    print("| model | quant | test | laneway tok/s | llama.cpp tok/s | ratio | paired ratio | laneway RSS MiB"
          " | llama.cpp RSS MiB |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for gguf in args.models:
        ftype = file_type(gguf)
        quant = QUANT_OF_FILE_TYPE.get(ftype, "q8")
        container = pack(gguf, quant, args.cache)
        lw, lc = [], []
        for _ in range(args.rounds):
            lw.append(laneway_round(container, args))
            lc.append(llama_round(binary, gguf, args))
        name = os.path.basename(gguf)
        source = FILE_TYPE_NAME.get(ftype, str(ftype))
        for i, test in enumerate(["pp%d" % args.p, "tg%d@d%d" % (args.n, args.p)]):
            ours = statistics.median(r[i] for r in lw)
            theirs = statistics.median(r[i] for r in lc)
            paired = statistics.median(a[i] / b[i] for a, b in zip(lw, lc))
            print("| %s | %s->%s | %s | %.2f | %.2f | %.3f | %.3f | %.0f | %.0f |" % (
                name, source, quant, test, ours, theirs, ours / theirs, paired,
                max(r[2] for r in lw), max(r[2] for r in lc)))
        sys.stdout.flush()


def routes_round(args, setups):
    """One process that opens the model once per route and alternates the routes' runs (laneway bench --vs)."""
    def model_args(model, opts):
        words = [model, "--opt", "threads=%d" % args.threads, "--opt", "kv=%s" % args.kv]
        for opt in list(args.laneway_opt) + list(opts):
            words += ["--opt", opt]
        return words
    (_, model, opts), rest = setups[0], setups[1:]
    cmd = [os.path.join(HOME, "laneway"), "bench", "-p", str(args.p), "-n", str(args.n), "-r", str(args.reps),
           "--json", "-m"] + model_args(model, opts)
    for _, m, o in rest:
        cmd += ["--vs", " ".join(model_args(m, o))]
    out, rss = run_measured(cmd)
    lines = out.strip().splitlines()[-len(setups):]
    return {name: json.loads(line) for (name, _, _), line in zip(setups, lines)}, rss


def compare_routes(args):
    """dx, the fast lane and the generic route on the same weights, their runs alternating in one process."""
    os.makedirs(args.cache, exist_ok=True)
    print("| model | quant | test | dx tok/s | fastlane tok/s | generic tok/s | dx / generic | fastlane / dx"
          " | RSS MiB, all three |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for gguf in args.models:
        ftype = file_type(gguf)
        quant = QUANT_OF_FILE_TYPE.get(ftype, "q8")
        container = pack(gguf, quant, args.cache)
        lane = pack(gguf, quant, args.cache, lane=True)
        setups = [("dx", container, ["dx=on"]), ("fastlane", lane, []), ("generic", container, ["dx=off"])]
        rounds, rss = [], 0
        for _ in range(args.rounds):
            result, peak = routes_round(args, setups)
            for name, _, _ in setups:
                if result[name]["route"] != name:
                    sys.exit("%s was served by the %s route" % (name, result[name]["route"]))
            rounds.append(result)
            rss = max(rss, peak)
        name = os.path.basename(gguf)
        source = FILE_TYPE_NAME.get(ftype, str(ftype))
        for key, test in (("pp_runs", "pp%d" % args.p), ("tg_runs", "tg%d@d%d" % (args.n, args.p))):
            runs = {k: [x for r in rounds for x in r[k][key]] for k in ("dx", "fastlane", "generic")}
            # Ratios pair the runs of one round of alternation, which ran within moments of each other.
            paired = lambda a, b: statistics.median(x / y for x, y in zip(runs[a], runs[b]))
            print("| %s | %s->%s | %s | %.2f | %.2f | %.2f | %.3f | %.3f | %.0f |" % (
                name, source, quant, test, statistics.median(runs["dx"]), statistics.median(runs["fastlane"]),
                statistics.median(runs["generic"]), paired("dx", "generic"), paired("fastlane", "dx"), rss))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
