"""What the examples share: the server's address, JSON POSTs, and tokens made with the engage CLI.

SERVER is the running server (default http://localhost:8080). ENGAGE is the engage
command (default: `engage` when it is on PATH, else `cargo run --release -q --` from the checkout).
The CLI finds the server's admin key itself when run where the server runs (its data dir, or
ENGAGE_DATA_DIR / ENGAGE_ADMIN_KEY as the server has them).
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import urllib.error
import urllib.request

BASE = os.environ.get("SERVER", "http://localhost:8080").rstrip("/")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def engage_command():
    """The engage CLI as a list of words."""
    if os.environ.get("ENGAGE"):
        return shlex.split(os.environ["ENGAGE"])
    if shutil.which("engage"):
        return ["engage"]
    return ["cargo", "run", "--release", "-q", "--"]


def cli(*args):
    """Runs `engage ARGS…` and returns its stdout; stops the example when it fails."""
    done = subprocess.run(engage_command() + list(args), capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"engage {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def token(kind, brand, outlet=None):
    """A new token of `kind` for `brand` (and `outlet`)."""
    args = ["tokens", "create", "--kind", kind, "--parent", brand]
    if outlet:
        args += ["--business", outlet]
    return cli(*args)


def post(path, body, headers=None):
    """POSTs `body` as JSON; (status, answer as JSON)."""
    request = urllib.request.Request(BASE + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")
    except urllib.error.URLError as error:
        sys.exit(f"engage is not answering at {BASE} (start it with `cargo run --release -- serve`): {error.reason}")


def must(status, answer, what):
    """The answer of a call that has to succeed."""
    if status != 200:
        sys.exit(f"{what} answered {status}: {json.dumps(answer)}")
    return answer
