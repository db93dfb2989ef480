#!/usr/bin/env python3
"""Soak: many requests on a device that times out at random, checked token for token against a fault-free run.

Starts `laneway serve` twice on the same model: once on the plain CPU device, to record the greedy answer of every
request shape, then on `chaos:cpu?p=P` (one kernel run in 1/P times out) with `--streams STREAMS`, and sends it
REQUESTS requests from CLIENTS concurrent clients: mixed streamed and not, over PROMPTS prompts and three answer
lengths, greedy. Every answer must equal the fault-free one or be a clean 503 device error; anything else (a wrong
token, another status, a dropped connection, a crash) fails the soak.

Measured and printed as one table:
  requests, exact, device errors (failed on the device / refused while it was out of service), wrong (must be 0),
  exact share (must be at least --min-exact, 99% by default), faults the device injected and the server absorbed,
  the server's RSS after the first 1,000 requests (or half of them, when fewer) and at the end (the end within
  --rss-growth, 5%, of it), its threads then and at the end (no more at the end), and its device contexts at the end
  (0: none left open). The server's heap is fixed and touched at start (-Xms = -Xmx, AlwaysPreTouch), so that RSS
  grows only with memory outside the heap (contexts, KV caches, native buffers); a leak on the heap ends in an
  OutOfMemoryError instead, which the soak sees as a server that died.

usage: bench/soak.py [--requests 10000] [--clients 8] [--streams 4] [--p 0.002] [--prompts 24]
                     [--min-exact 0.99] [--rss-growth 0.05] MODEL.gguf
A short version runs in CI (.ci/soak).
"""
import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time

HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LENGTHS = (8, 24, 48)
STARTERS = ("Once upon a time", "The little dog", "One day, a girl named Lily", "Tom and his friend", "The sun was",
            "In the park", "A big red ball", "Mom said", "The cat sat", "There was a tree", "Sam liked to",
            "It was a cold day")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`laneway serve` on a free loopback port."""

    def __init__(self, model, device, streams, log):
        self.port = free_port()
        cmd = [os.path.join(HOME, "laneway"), "serve", "-m", model, "--streams", str(streams), "--port",
               str(self.port), "--device", device]
        env = dict(os.environ)
        env.setdefault("LANEWAY_JAVA_OPTS", "-Xms384m -Xmx384m -XX:+AlwaysPreTouch")
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 600
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit("the server exited at start: " + " ".join(cmd))
            try:
                if self.get("/health")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.25)
        sys.exit("the server did not become ready")

    def get(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("GET", path)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, body

    def complete(self, prompt, max_tokens, stream):
        """(status, text, error code); a streamed answer that ends with an error event gives its code."""
        body = json.dumps({"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": stream}).encode()
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        r = c.getresponse()
        if r.status != 200:
            error = json.loads(r.read() or b"{}").get("error", {})
            c.close()
            return r.status, None, error.get("code")
        if not stream:
            text = json.loads(r.read())["choices"][0]["text"]
            c.close()
            return 200, text, None
        parts, done = [], False
        for raw in r:
            line = raw.decode("utf-8").strip()
            if line == "data: [DONE]":
                done = True
            elif line.startswith("data: "):
                event = json.loads(line[6:])
                if "error" in event:
                    c.close()
                    return 503, None, event["error"].get("code")
                choices = event.get("choices") or []
                if choices and choices[0].get("text"):
                    parts.append(choices[0]["text"])
        c.close()
        return (200 if done else 0), "".join(parts), None

    def rss_and_threads(self):
        rss = threads = 0
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
        return rss, threads

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--p", type=float, default=0.002)
    ap.add_argument("--prompts", type=int, default=24)
    ap.add_argument("--min-exact", type=float, default=0.99)
    ap.add_argument("--rss-growth", type=float, default=0.05)
    args = ap.parse_args()

    rng = random.Random(7)
    prompts = ["%s %s" % (STARTERS[i % len(STARTERS)], " ".join(rng.choice(["and", "a", "big", "happy", "little",
               "went", "to", "the", "park", "saw"]) for _ in range(i % 9))) for i in range(args.prompts)]
    shapes = [(p, n) for p in prompts for n in LENGTHS]
    log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "laneway-soak.log"), "ab")

    clean = Server(args.model, "cpu", 1, log)
    try:
        expected = {}
        for p, n in shapes:
            status, text, _ = clean.complete(p, n, False)
            if status != 200:
                sys.exit("the fault-free server answered %d" % status)
            expected[(p, n)] = text
    finally:
        clean.stop()

    server = Server(args.model, "chaos:cpu?p=%g&seed=11" % args.p, args.streams, log)
    counts = {"exact": 0, "device_fault": 0, "device_unavailable": 0, "wrong": 0, "other": 0}
    lock = threading.Lock()
    next_request = [0]
    warm = {}
    problems = []

    def client():
        while True:
            with lock:
                i = next_request[0]
                next_request[0] += 1
            if i >= args.requests:
                return
            if i == min(1000, args.requests // 2):
                with lock:
                    warm.setdefault("rss_threads", server.rss_and_threads())
            p, n = shapes[i % len(shapes)]
            try:
                status, text, code = server.complete(p, n, i % 2 == 0)
            except (OSError, http.client.HTTPException, ValueError) as e:
                status, text, code = -1, None, repr(e)
            with lock:
                if status == 200 and text == expected[(p, n)]:
                    counts["exact"] += 1
                elif status == 200:
                    counts["wrong"] += 1
                    problems.append("wrong answer to %r (%d tokens): %r" % (p, n, text))
                elif status == 503 and code in ("device_fault", "device_unavailable"):
                    counts[code] += 1
                else:
                    counts["other"] += 1
                    problems.append("request %d: status %d, %s" % (i, status, code))

    started = time.time()
    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.time() - started
    time.sleep(1)  # the last busy period ends and its context is dropped
    alive = server.proc.poll() is None
    rss_end, threads_end = server.rss_and_threads() if alive else (0, 0)
    state = json.loads(server.get("/v1/diagnostics")[1])["state"] if alive else {}
    server.stop()

    rss_warm, threads_warm = warm.get("rss_threads", (0, 0))
    exact_share = counts["exact"] / args.requests
    growth = (rss_end - rss_warm) / rss_warm if rss_warm else float("inf")
    rows = [
        ("requests (%d clients, %d streams, p=%g, %.0f s)" % (args.clients, args.streams, args.p, seconds),
         args.requests, ""),
        ("exact", counts["exact"], "%.2f%% (at least %.0f%%)" % (100 * exact_share, 100 * args.min_exact)),
        ("failed on the device (503 device_fault)", counts["device_fault"], ""),
        ("refused while out of service (503 device_unavailable)", counts["device_unavailable"], ""),
        ("wrong answers", counts["wrong"], "must be 0"),
        ("other outcomes (status, dropped connection)", counts["other"], "must be 0"),
        ("faults injected and recorded", state.get("faults", "?"), ""),
        ("RSS after %d requests, MB" % min(1000, args.requests // 2), round(rss_warm / 2 ** 20, 1), ""),
        ("RSS at the end, MB", round(rss_end / 2 ** 20, 1), "%+.1f%% (at most %+.0f%%)" % (100 * growth,
                                                                                     100 * args.rss_growth)),
        ("threads then / at the end", "%d / %d" % (threads_warm, threads_end), "no more at the end"),
        ("device contexts open at the end", state.get("contexts", "?"), "must be 0"),
        ("server alive at the end", alive, ""),
    ]
    print("| measure | value | check |")
    print("|---|---|---|")
    for name, value, check in rows:
        print("| %s | %s | %s |" % (name, value, check))
    for p in problems[:10]:
        print(p, file=sys.stderr)
    ok = (alive and counts["wrong"] == 0 and counts["other"] == 0 and exact_share >= args.min_exact
          and growth <= args.rss_growth and threads_end <= threads_warm and str(state.get("contexts")) == "0")
    if not ok:
        sys.exit("soak: FAILED")
    print("soak: passed")


if __name__ == "__main__":
    main()
