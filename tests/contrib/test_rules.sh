#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# contrib/prometheus: the rules are valid (promtool check rules) and do what
# their unit tests say (promtool test rules): each alert fires, after its
# `for`, with its labels and annotations; the recording rules' values.
set -eu
: "${XENSTATS_SOURCE_ROOT:?}"
command -v promtool >/dev/null || { echo "promtool not installed (Debian: prometheus)"; exit 77; }
cd "$XENSTATS_SOURCE_ROOT/contrib/prometheus"
promtool check rules xenstats-rules.yml
promtool test rules xenstats-rules.test.yml
# every alert of the rules has a test
python3 - <<'PY'
import re
rules = set(re.findall(r"^\s+- alert: (\w+)", open("xenstats-rules.yml").read(), re.M))
tested = set(re.findall(r"^\s+alertname: (\w+)", open("xenstats-rules.test.yml").read(), re.M))
assert rules and rules <= tested, f"alerts without a test: {sorted(rules - tested)}"
print(f"{len(rules)} alerts, each tested")
PY
