#!/usr/bin/env python3
"""Laneway against llama-server under load: the same streamed requests from C concurrent clients.

Both servers serve the same GGUF file with the same number of slots (Laneway --streams S, llama-server -np S, with
-c S x CTX so that each slot holds CTX positions), on the same threads. A server is loaded when /health answers
200 without "background_work" (Laneway's copies of streamed weights, made on idle cores after loading, are done).
Scenarios, each run against one server, then the other, ROUNDS times (the order alternates each round); figures are
medians over rounds.

  clients C:  C clients, each sending REQUESTS streamed /v1/completions requests one after another: a prompt of
              about 80 tokens (different for every request) and 64 generated tokens (ignore_eos).
  multi-turn: one client, an 8-turn conversation: each turn's prompt is the previous turn's prompt, its answer
              (16 tokens) and about 100 new tokens; TTFT of every turn.
  shared:     4 clients at once whose prompts share a 400-token prefix and differ in the last 40 tokens.
  two-models: (with --second MODEL2.gguf) both files behind one server that loads one at a time (Laneway -m A -m B
              --max-models 1; llama-server's router mode, --models-dir holding both, --models-max 1): requests
              alternate between the models, so each must unload the other and load its own; the time to first
              token of such a switch, against one to the model already loaded (SWITCHES of each, after one switch
              each way untimed, which leaves the packed copies and the page cache warm), and the server's RSS
              (its processes') with the first model at its first load and again after the switches.
  adapters:   (one server each with ADAPTERS random LoRA adapters of rank 16 on every projection, in F16 as
              llama.cpp's converter writes them by default, made by bench/random-adapter) 8 clients at once, client i on adapter i mod ADAPTERS (Laneway: the adapter's model
              id; llama-server: --lora-init-without-apply and the request's lora scale), against 8 clients on the base
              model of the same server. Rows: "adapters 8 over N" and "base 8 beside adapters".

Prompts are random sequences of common English words. With a real tokenizer each word is about one token, and a
generated answer read back in the next turn's prompt is (mostly) the same tokens again, as a trained model's answer
is: make the random model with one, e.g. `bench/random-model 1b Q8_0 1b-q8_0.gguf --vocab ggml-vocab-llama-spm.gguf`
(llama.cpp's Llama 2 vocabulary-only file, 32000 tokens like the 1B shape). With the random models' own synthetic
vocabulary every character is a byte token instead: prompts are about five times longer, and an answer of 16 tokens
comes back as about 90 others.

Reported: aggregate generated tok/s (all tokens over the wall time from the first request to the last answer),
time to first token p50/p99, inter-token latency p50 (gaps between streamed tokens), and the ratio Laneway /
llama-server (for latencies, lower is better: the ratio is still Laneway / llama-server).

usage: bench/load.py [--clients 1,4,8] [--slots 4] [--rounds 3] [--requests 2] [--ctx 4096] [--threads 2]
                     [--scenarios clients,multi-turn,shared,two-models,adapters] [--second MODEL2.gguf]
                     [--switches 4] [--adapters 4]
                     [--kv f16|q8_0] [--laneway-opt K=V]... MODEL.gguf
llama-server comes from $LLAMA_CPP_BIN, else the peer build script beside the checkout.
Output format (stable, one row per scenario and measure):
  | scenario | measure | laneway | llama-server | ratio |
"""
import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time

HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATED = 64


def llama_bin():
    if os.environ.get("LLAMA_CPP_BIN"):
        return os.environ["LLAMA_CPP_BIN"]
    script = os.path.join(os.path.dirname(HOME), "shared", "peer", "build-native.sh")
    return subprocess.check_output([script], text=True).strip().splitlines()[-1]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server process on a port of the loopback address, started and stopped by the benchmark."""

    def __init__(self, name, cmd, port, log):
        self.name, self.cmd, self.port, self.log = name, cmd, port, log
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 600
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit("%s exited at start: %s" % (self.name, " ".join(self.cmd)))
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/health")
                r = c.getresponse()
                if r.status == 200 and "background_work" not in json.loads(r.read() or b"{}"):
                    return self
            except (OSError, ValueError):
                pass
            time.sleep(0.25)
        sys.exit("%s did not become ready" % self.name)

    def stop(self):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def complete(self, prompt, max_tokens=GENERATED, model=None, extra=None):
        """One streamed completion; returns (send time, token arrival times, generated text)."""
        request = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": True, "ignore_eos": True}
        if model:
            request["model"] = model
        request.update(extra or {})
        body = json.dumps(request).encode()
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        sent = time.time()
        c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        if r.status != 200:
            raise RuntimeError("%s answered %d: %s" % (self.name, r.status, r.read()[:300]))
        arrivals, text = [], []
        for raw in r:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            if "error" in event:
                raise RuntimeError("%s: %s" % (self.name, event["error"]))
            choices = event.get("choices") or []
            if choices and choices[0].get("text"):
                arrivals.append(time.time())
                text.append(choices[0]["text"])
        c.close()
        return sent, arrivals, "".join(text)


COMMON = ("the of and to in is you that it he was for on are as with his they at be this have from or one had by "
          "word but not what all were we when your can said there use an each which she do how their if will up "
          "other about out many then them these so some her would make like him into time has look two more write "
          "go see number no way could people my than first water been call who oil its now find long down day did "
          "get come made may part over new sound take only little work know place year live me back give most very "
          "after thing our just name good sentence man think say great where help through much before line right "
          "too mean old any same tell boy follow came want show also around form three small set put end does "
          "another well large must big even such because turn here why ask went men read need land different home "
          "us move try kind hand picture again change off play spell air away animal house point page letter mother "
          "answer found study still learn should world").split()


def words(rng, n):
    """About n tokens of text (with a real tokenizer): n random common words."""
    return " ".join(rng.choice(COMMON) for _ in range(n))


def percentile(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))] if v else float("nan")


def run_clients(server, clients, requests, rng_seed, shared_prefix=None, adapter=None):
    """
    C clients at once; returns aggregate tok/s, TTFT p50, p99 and inter-token p50. adapter(i), when given, is client
    i's (model, extra request fields).
    """
    results, errors = [], []
    prompts = []
    rng = random.Random(rng_seed)
    for c in range(clients):
        prompts.append([(shared_prefix + " " + words(rng, 40)) if shared_prefix else words(rng, 80)
                        for _ in range(requests)])

    def client(i):
        try:
            model, extra = adapter(i) if adapter else (None, None)
            for p in prompts[i]:
                results.append(server.complete(p, model=model, extra=extra))
        except Exception as e:  # reported below; the other clients go on
            errors.append(str(e))

    start = time.time()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - start
    if errors:
        sys.exit("%s: %d requests failed, first: %s" % (server.name, len(errors), errors[0]))
    tokens = sum(len(a) for _, a, _ in results)
    ttft = [a[0] - s for s, a, _ in results if a]
    gaps = [b - a for _, arr, _ in results for a, b in zip(arr, arr[1:])]
    return {"gen tok/s": tokens / wall, "TTFT p50 s": percentile(ttft, 50), "TTFT p99 s": percentile(ttft, 99),
            "ITL p50 ms": 1000 * percentile(gaps, 50)}


def run_multi_turn(server, turns, rng_seed):
    rng = random.Random(rng_seed)
    prompt = words(rng, 140)
    ttfts = []
    for _ in range(turns):
        sent, arrivals, text = server.complete(prompt, 16)
        ttfts.append(arrivals[0] - sent)
        prompt = prompt + text + " " + words(rng, 100)
    return {"TTFT turn %d s" % (i + 1): t for i, t in enumerate(ttfts)} | {
        "turn 8 / turn 1": ttfts[-1] / ttfts[0]}


def rss_mib(pid):
    """Resident memory of a process and its descendants (llama-server's router runs each model as a child), MiB."""
    total = 0
    try:
        with open("/proc/%d/status" % pid) as f:
            total = next((int(l.split()[1]) for l in f if l.startswith("VmRSS:")), 0) / 1024.0
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                total += sum(rss_mib(int(c)) for c in f.read().split())
    except (OSError, ValueError):
        pass
    return total


def run_two_models(server, names, switches, rng_seed):
    """
    Requests alternating between two models of which one fits: TTFT of a switch and of staying on one model, and the
    server's memory once the first model is loaded against after the switches (what unloading gives back).
    """
    rng = random.Random(rng_seed)
    server.complete(words(rng, 8), 4, names[0])
    first = rss_mib(server.proc.pid)
    for name in names[1:] + names:  # untimed: each loads once and is switched to once
        server.complete(words(rng, 8), 4, name)
    switched, stayed = [], []
    for i in range(switches):
        name = names[i % 2]
        sent, arrivals, _ = server.complete(words(rng, 40), 16, name)  # the other model was loaded
        switched.append(arrivals[0] - sent)
        sent, arrivals, _ = server.complete(words(rng, 40), 16, name)  # the same model again
        stayed.append(arrivals[0] - sent)
    server.complete(words(rng, 8), 4, names[0])  # back on the first model, to weigh the memory alike
    return {"switch TTFT s": statistics.median(switched), "same-model TTFT s": statistics.median(stayed),
            "RSS one model MiB": first, "RSS after switches MiB": rss_mib(server.proc.pid)}


def two_model_servers(args, log):
    """Laneway and llama-server's router, each serving both files with room for one model."""
    folder = os.path.join(os.environ.get("TMPDIR", "/tmp"), "laneway-two-models-%d" % os.getpid())
    os.makedirs(folder, exist_ok=True)
    for m in (args.model, args.second):
        link = os.path.join(folder, os.path.basename(m))
        if not os.path.exists(link):
            os.symlink(os.path.abspath(m), link)
    names = [os.path.basename(m)[:-len(".gguf")] for m in (args.model, args.second)]
    lw_port, ls_port = free_port(), free_port()
    lw_cmd = [os.path.join(HOME, "laneway"), "serve", "-m", args.model, "-m", args.second, "--max-models", "1",
              "--streams", "1", "--host", "127.0.0.1", "--port", str(lw_port), "--opt", "threads=%d" % args.threads,
              "--opt", "ctx=%d" % args.ctx]
    ls_cmd = [os.path.join(llama_bin(), "llama-server"), "--models-dir", folder, "--models-max", "1",
              "-t", str(args.threads), "-np", "1", "-c", str(args.ctx), "--host", "127.0.0.1", "--port",
              str(ls_port)]
    return names, [Server("laneway", lw_cmd, lw_port, log), Server("llama-server", ls_cmd, ls_port, log)]


def adapter_servers(args, log):
    """Laneway and llama-server, each serving the model with the same random adapters."""
    folder = os.path.join(os.environ.get("TMPDIR", "/tmp"), "laneway-adapters-%d" % os.getpid())
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i in range(args.adapters):
        path = os.path.join(folder, "a%d.gguf" % i)
        subprocess.run([os.path.join(HOME, "bench", "random-adapter"), args.model, path, "16", "32", "0.01",
                        str(i + 1), "all", "F16"], check=True, stdout=log, stderr=log)
        paths.append(path)
    lw_port, ls_port = free_port(), free_port()
    lw_cmd = [os.path.join(HOME, "laneway"), "serve", "-m", args.model, "--streams", "8", "--host", "127.0.0.1",
              "--port", str(lw_port), "--opt", "threads=%d" % args.threads, "--opt", "ctx=%d" % args.ctx]
    ls_cmd = [os.path.join(llama_bin(), "llama-server"), "-m", args.model, "-t", str(args.threads), "-np", "8",
              "-c", str(8 * args.ctx), "--host", "127.0.0.1", "--port", str(ls_port), "--lora-init-without-apply"]
    for i, path in enumerate(paths):
        lw_cmd += ["--lora", "a%d=%s" % (i, path)]
        ls_cmd += ["--lora", path]
    return [Server("laneway", lw_cmd, lw_port, log), Server("llama-server", ls_cmd, ls_port, log)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--clients", default="1,4,8")
    ap.add_argument("--slots", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=2, help="requests per client in the clients scenarios")
    ap.add_argument("--ctx", type=int, default=4096, help="positions per slot")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--turns", type=int, default=8)
    ap.add_argument("--scenarios", default="clients,multi-turn,shared")
    ap.add_argument("--laneway-opt", action="append", default=[])
    ap.add_argument("--kv", choices=["f16", "q8_0"], default="f16",
                    help="both servers' KV cache type (-ctk/-ctv; llama-server's q8_0 with -fa on)")
    ap.add_argument("--second", help="a second GGUF file, for the two-models scenario")
    ap.add_argument("--switches", type=int, default=4)
    ap.add_argument("--adapters", type=int, default=4)
    args = ap.parse_args()
    scenarios = args.scenarios.split(",")
    if "two-models" in scenarios and not args.second:
        sys.exit("the two-models scenario needs --second MODEL2.gguf")
    clients = [int(c) for c in args.clients.split(",")]

    log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "laneway-load.log"), "ab")
    lw_port, ls_port = free_port(), free_port()
    lw_cmd = [os.path.join(HOME, "laneway"), "serve", "-m", args.model, "--streams", str(args.slots),
              "--host", "127.0.0.1", "--port", str(lw_port), "--opt", "threads=%d" % args.threads,
              "--opt", "ctx=%d" % args.ctx]
    for o in args.laneway_opt:
        lw_cmd += ["--opt", o]
    ls_cmd = [os.path.join(llama_bin(), "llama-server"), "-m", args.model, "-t", str(args.threads),
              "-np", str(args.slots), "-c", str(args.slots * args.ctx), "--host", "127.0.0.1", "--port",
              str(ls_port)]
    if args.kv != "f16":
        lw_cmd += ["-ctk", args.kv, "-ctv", args.kv]
        ls_cmd += ["-ctk", args.kv, "-ctv", args.kv, "-fa", "on"]
    servers = [Server("laneway", lw_cmd, lw_port, log), Server("llama-server", ls_cmd, ls_port, log)]
    one_model = [s for s in scenarios if s not in ("two-models", "adapters")]
    names, two = two_model_servers(args, log) if "two-models" in scenarios else ([], [])
    adapted = adapter_servers(args, log) if "adapters" in scenarios else []

    def adapter_of(server):
        if server.name == "laneway":
            return lambda i: ("a%d" % (i % args.adapters), None)
        return lambda i: (None, {"lora": [{"id": i % args.adapters, "scale": 1.0}]})

    # rows[(scenario, measure)][server] = [value per round]
    rows = {}

    def record(scenario, measures, server):
        for k, v in measures.items():
            rows.setdefault((scenario, k), {}).setdefault(server.name, []).append(v)

    for rnd in range(args.rounds):
        order = servers if rnd % 2 == 0 else servers[::-1]
        for server in two if rnd % 2 == 0 else two[::-1]:
            server.start()
            try:
                record("two-models", run_two_models(server, names, args.switches, 1000 * rnd + 900), server)
            finally:
                server.stop()
        for server in adapted if rnd % 2 == 0 else adapted[::-1]:
            server.start()
            try:
                seed = 1000 * rnd + 800
                server.complete(words(random.Random(98), 8), 4)  # warm-up, not timed
                record("adapters 8 over %d" % args.adapters,
                       run_clients(server, 8, args.requests, seed, adapter=adapter_of(server)), server)
                record("base 8 beside adapters", run_clients(server, 8, args.requests, seed + 1), server)
            finally:
                server.stop()
        for server in order if one_model else []:
            server.start()
            try:
                server.complete(words(random.Random(99), 8), 4)  # warm-up, not timed
                seed = 1000 * rnd
                if "clients" in scenarios:
                    for c in clients:
                        record("clients %d" % c, run_clients(server, c, args.requests, seed + c), server)
                if "multi-turn" in scenarios:
                    record("multi-turn", run_multi_turn(server, args.turns, seed + 500), server)
                if "shared" in scenarios:
                    prefix = words(random.Random(seed + 700), 400)
                    record("shared 400 x4", run_clients(server, 4, 1, seed + 701, prefix), server)
            finally:
                server.stop()
        print("round %d of %d done" % (rnd + 1, args.rounds), file=sys.stderr)

    print("| scenario | measure | laneway | llama-server | ratio |")
    print("|---|---|---|---|---|")
    for (scenario, measure), by in rows.items():
        a = statistics.median(by["laneway"])
        b = statistics.median(by["llama-server"])
        print("| %s | %s | %.3f | %.3f | %.2f |" % (scenario, measure, a, b, a / b if b else float("nan")))


if __name__ == "__main__":
    main()
