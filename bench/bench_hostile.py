#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The agent beside hostile guests, against a quiet host in the same run.

An emulated host with two healthy guests (a provider of 32 statistics each)
and three guests that each keep 225 malformed sets and change them 50 times
a second (pv_hostile storm).  The agent samples every 500 ms.  Reported for
a quiet phase (the storms not started) and a hostile phase: the agent's CPU
share of one core, and the sampling round time of the healthy guests (the
agent's own sample_duration); then the ratios, and what each hostile
domain's budget did.

  bench/bench_hostile.py [--build DIR] [--xenstats PATH] [--seconds S]
Run from the source tree after building (default build dir: build);
--xenstats runs another build's emulator and agent (e.g. an older one) with
this build's hostile guest, for a before/after comparison.
"""
import argparse, json, os, shutil, signal, socket, statistics, subprocess, sys, tempfile, time, urllib.request


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])  # utime + stime


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def snapshot(url):
    return json.load(urllib.request.urlopen(url + "/api/v1/snapshot", timeout=5))


def phase(agent, url, seconds):
    hz = os.sysconf("SC_CLK_TCK")
    rounds, seen = [], None
    t0, c0 = time.monotonic(), ticks(agent.pid)
    while time.monotonic() - t0 < seconds:
        s = snapshot(url)
        if s["agent"]["samples"] != seen:
            seen = s["agent"]["samples"]
            rounds.append(s["agent"]["sample_duration"] * 1e3)
        time.sleep(0.1)
    elapsed, c1 = time.monotonic() - t0, ticks(agent.pid)
    return {"cpu": (c1 - c0) / hz / elapsed * 100, "rounds": rounds, "last": s}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--xenstats")
    args = ap.parse_args()
    xenstats = os.path.abspath(args.xenstats or os.path.join(args.build, "xenstats"))
    hostile = os.path.abspath(os.path.join(args.build, "tests/pvstats/pv_hostile"))
    provider = os.path.abspath(os.path.join(args.build, "tests/pvstats/pv_test_provider"))
    tmp = tempfile.mkdtemp(prefix="bench-hostile.")
    env = dict(os.environ, XENSTATS_EMU_DIR=tmp + "/emu")
    procs = []

    def spawn(cmd, domid=None, **kw):
        e = dict(env, XENSTATS_EMU_DOMID=str(domid)) if domid is not None else env
        p = subprocess.Popen(cmd, env=e, stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/{len(procs)}.err", "w"), **kw)
        procs.append(p)
        return p

    try:
        doms = ["good1", "good2", "evil1", "evil2", "evil3"]
        spawn([xenstats, "emu"] + sum((["-D", f"name={d},vcpus=1"] for d in doms), []))
        for _ in range(100):
            if os.path.exists(tmp + "/emu/control"):
                break
            time.sleep(0.05)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        agent = spawn([xenstats, "agent", "--listen", f"127.0.0.1:{port}", "--interval", "500ms", "--timeout", "200ms"])
        for _ in range(100):  # the agent creates the guests' stats nodes the providers need
            try:
                if snapshot(url)["agent"]["samples"]:
                    break
            except OSError:
                time.sleep(0.1)
        for d in (1, 2):
            spawn([provider, "--provider", "Healthy", "--count", "32"], domid=d)
        for _ in range(100):
            try:
                s = snapshot(url)
                if sum(x["state"] == "active" for d in s["domains"] for x in d["pv_sets"]) == 2:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        else:
            sys.exit("bench_hostile: the healthy providers never became active")
        time.sleep(1)
        quiet = phase(agent, url, args.seconds)
        storms = [spawn([hostile, "storm"], domid=d) for d in (3, 4, 5)]
        time.sleep(2)  # the storms publish their sets
        loud = phase(agent, url, args.seconds)

        print(f"CPU: {cpu_model()} ({os.cpu_count()} CPUs)")
        print(f"agent: 500 ms interval; 2 healthy guests (32 statistics each); 3 hostile guests "
              f"(225 malformed sets, 50 writes/s each); {args.seconds:.0f} s per phase")
        for name, p in (("quiet", quiet), ("hostile", loud)):
            r = p["rounds"]
            print(f"{name:8s} agent CPU {p['cpu']:5.2f} % of a core; healthy round time mean {statistics.mean(r):.2f} ms,"
                  f" p50 {statistics.median(r):.2f} ms, max {max(r):.2f} ms ({len(r)} rounds)")
        print(f"ratio    CPU {loud['cpu'] / max(quiet['cpu'], 0.01):.2f}x (+{loud['cpu'] - quiet['cpu']:.2f} points), "
              f"round time mean {statistics.mean(loud['rounds']) / statistics.mean(quiet['rounds']):.2f}x "
              f"(goals: under 10 % of a core; within 2x)")
        for d in loud["last"]["domains"]:
            b = d.get("pv_budget")
            if b and d["name"].startswith("evil"):
                print(f"{d['name']}: throttled={b['throttled']} rejected={b['sets_rejected']} ignored={b['sets_ignored']}"
                      f" reads={b['xenstore_reads']} rescans={b['rescans']} log_suppressed={b['log_suppressed']}")
        healthy = [x for d in loud["last"]["domains"] for x in d["pv_sets"] if x["provider"] == "Healthy"]
        print("healthy sets:", ", ".join(f"{x['state']} ({x['samples']} samples)" for x in healthy))
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
