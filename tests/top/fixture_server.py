#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for `xenstats agent` serving /api/v1/snapshot for tests.

Every GET of /good/api/v1/snapshot returns the next snapshot of a synthetic
host whose figures grow at fixed rates, so the shares `xenstats top`
computes are exact whatever the timing:
  domid 1 "web", 2 vCPUs: each 50% running, 25% runnable, 25% blocked,
           10 state changes/s each; PV set "Network #0"/"Tx" active
  domid 2 "db", 1 vCPU: 20% running, 80% blocked, 4 changes/s; a rejected set
  domid 5 hostile name with control characters, 1 vCPU offline 100%
Other prefixes serve broken answers: /garbage (not JSON), /wrongtype (JSON
that breaks the contract), /missing (HTTP 404), /stuck (the same snapshot
every time), /slow (answers after 8 s).  Writes the port it listens on to the file named by argv[1].
"""
import http.server
import json
import sys
import threading
import time

lock = threading.Lock()
counter = {"n": 0}
HOSTILE = "evil\u001b[2J\u001b]0;pwned\u0007name"


def snapshot(k):
    t = float(k)

    def vcpu(n, running, runnable, blocked, offline, changes, state):
        return {"vcpu": n, "state": state, "running": running * t, "runnable": runnable * t,
                "blocked": blocked * t, "offline": offline * t, "state_changes": int(changes * k)}

    return {
        "version": 1,
        "host": {"backend": "emu", "self_domid": 0},
        "time": 1764748800.0 + t,
        "monotonic_ns": 1000000000000 + k * 1000000000,
        "interval": 1.0,
        "agent": {"samples": k, "sample_duration": 0.001, "errors": 0, "domains": 3,
                  "providers": 1, "pv_sets": 2, "pv_sets_rejected": 1},
        "domains": [
            {"domid": 1, "name": "web", "nr_vcpus": 2, "vcpu_source": "resource", "vcpu_error": None,
             "vcpus": [vcpu(0, 0.5, 0.25, 0.25, 0, 10, "running"),
                       vcpu(1, 0.5, 0.25, 0.25, 0, 10, "runnable")],
             "pv_sets": [{"provider": "Network #0", "set": "Tx", "state": "active", "reason": "",
                          "samples": k, "timeouts": 0, "errors": 0, "latency": 0.0004,
                          "stats": [{"name": "packets", "type": "u64", "value": 1000 * k},
                                    {"name": "driver", "type": "ascii", "value": "netfront\u001b[31m"}]}]},
            {"domid": 2, "name": "db", "nr_vcpus": 1, "vcpu_source": "resource", "vcpu_error": None,
             "vcpus": [vcpu(0, 0.2, 0, 0.8, 0, 4, "blocked")],
             "pv_sets": [{"provider": "Disk", "set": "bad\u0007set", "state": "rejected",
                          "reason": "bad name page", "samples": 0, "timeouts": 0, "errors": 1,
                          "latency": None, "stats": []}]},
            {"domid": 5, "name": HOSTILE, "nr_vcpus": 1, "vcpu_source": "resource", "vcpu_error": None,
             "vcpus": [vcpu(0, 0, 0, 0, 1, 0, "offline")], "pv_sets": []},
        ],
    }


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="application/json"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path
        if path == "/good/api/v1/snapshot":
            with lock:
                counter["n"] += 1
                k = counter["n"]
            self.reply(200, json.dumps(snapshot(k)))
        elif path == "/slow/api/v1/snapshot":
            time.sleep(8)
            self.reply(200, json.dumps(snapshot(1)))
        elif path == "/stuck/api/v1/snapshot":
            self.reply(200, json.dumps(snapshot(1)))
        elif path == "/garbage/api/v1/snapshot":
            self.reply(200, "<html>this is not the agent</html>", "text/html")
        elif path == "/wrongtype/api/v1/snapshot":
            self.reply(200, json.dumps({"version": 1, "monotonic_ns": 1,
                                        "domains": [{"domid": "one"}]}))
        else:
            self.reply(404, "not found\n", "text/plain")


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
