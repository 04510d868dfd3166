#!/usr/bin/python3
"""A pretend forge for tests/git/pr.sh: the pull-request endpoints of
GitHub's API (under /, as SANDY_PR_API=http://127.0.0.1:PORT) and of
Gitea's (under /api/v1), from in-memory state.

  FORGE_GITHUB_TOKEN=T FORGE_GITEA_TOKEN=T forge.py --port-file FILE --log FILE

Listens on 127.0.0.1 on a port of its own choosing and writes the port to
--port-file once it listens. Every request to the API (not the /_test
ones) is one JSON line in --log: method, path with its query, body as
text, and whether its Authorization header was the right one.

GitHub: GET /repos/O/R (default_branch), GET /repos/O/R/pulls (state,
head=O:BRANCH, base filters), POST /repos/O/R/pulls (422 when one is open
for the same head and base). "Authorization: Bearer T" only.
Gitea: GET /api/v1/version (no token), GET /api/v1/repos/O/R, GET
/api/v1/repos/O/R/pulls (state, page, limit capped at PAGE_MAX as Gitea's
MAX_RESPONSE_ITEMS does), POST (409 when one is open for the same head and
base). "Authorization: token T" only.
Both refuse a head whose name starts with "unpushed", as a branch the
forge does not have (GitHub 422, Gitea 404).

For the test itself: GET /_test/state (every forge's pull requests),
POST /_test/seed {"forge", "owner", "repo", "prs": [{"head", "base",
"title"}]} (adds pull requests without logging), POST /_test/reset.
"""
import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PAGE_MAX = 30
DEFAULT_BRANCH = "main"

lock = threading.Lock()
# state[forge][(owner, repo)] = [pr, ...]
state = {"github": {}, "gitea": {}}


def new_pr(forge, owner, repo, head, base, title, body):
    prs = state[forge].setdefault((owner, repo), [])
    number = len(prs) + 1
    kind = "pull" if forge == "github" else "pulls"
    host = "github.com" if forge == "github" else "gitea.test"
    pr = {
        "number": number,
        "html_url": f"https://{host}/{owner}/{repo}/{kind}/{number}",
        "state": "open",
        "title": title,
        "body": body,
        "head": {"ref": head, "label": f"{owner}:{head}"},
        "base": {"ref": base, "label": f"{owner}:{base}"},
    }
    prs.append(pr)
    return pr


class Handler(BaseHTTPRequestHandler):
    server_version = "forge.py"

    def log_message(self, fmt, *args):
        pass

    def answer(self, code, doc):
        data = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n).decode("utf-8", "replace") if n else ""

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def handle_any(self, method):
        body = self.body()
        url = urlsplit(self.path)
        with lock:
            if url.path.startswith("/_test/"):
                return self.control(method, url.path, body)
            if url.path == "/api/v1" or url.path.startswith("/api/v1/"):
                forge, path = "gitea", url.path[len("/api/v1"):]
                expected = "token " + self.server.tokens["gitea"]
            else:
                forge, path = "github", url.path
                expected = "Bearer " + self.server.tokens["github"]
            auth_ok = self.headers.get("Authorization") == expected
            with open(self.server.log, "a") as f:
                f.write(json.dumps({"method": method, "path": self.path, "forge": forge,
                                    "body": body, "auth_ok": auth_ok}) + "\n")
            if forge == "gitea" and path == "/version" and method == "GET":
                return self.answer(200, {"version": "1.22.0"})
            parts = path.strip("/").split("/")
            if len(parts) < 3 or parts[0] != "repos":
                return self.answer(404, {"message": "Not Found"})
            if not auth_ok:
                msg = "Bad credentials" if forge == "github" else "user does not exist"
                return self.answer(401, {"message": msg})
            owner, repo, rest = parts[1], parts[2], parts[3:]
            prs = state[forge].setdefault((owner, repo), [])
            query = parse_qs(url.query)
            if rest == [] and method == "GET":
                return self.answer(200, {"full_name": f"{owner}/{repo}",
                                         "default_branch": DEFAULT_BRANCH})
            if rest != ["pulls"]:
                return self.answer(404, {"message": "Not Found"})
            if method == "GET":
                return self.list(forge, owner, prs, query)
            if method == "POST":
                return self.create(forge, owner, repo, prs, body)
            return self.answer(405, {"message": "Method Not Allowed"})

    def list(self, forge, owner, prs, query):
        st = query.get("state", ["open"])[0]
        found = [p for p in prs if st == "all" or p["state"] == st]
        if forge == "github":
            if "head" in query:
                found = [p for p in found if f"{owner}:{p['head']['ref']}" == query["head"][0]]
            if "base" in query:
                found = [p for p in found if p["base"]["ref"] == query["base"][0]]
            per_page = min(int(query.get("per_page", ["30"])[0]), 100)
            page = int(query.get("page", ["1"])[0])
        else:
            per_page = min(int(query.get("limit", [str(PAGE_MAX)])[0]), PAGE_MAX)
            page = int(query.get("page", ["1"])[0])
        start = (max(page, 1) - 1) * per_page
        return self.answer(200, found[start:start + per_page])

    def create(self, forge, owner, repo, prs, body):
        try:
            doc = json.loads(body)
        except ValueError:
            return self.answer(400, {"message": "Problems parsing JSON"})
        fields = ("title", "head", "base")
        if not isinstance(doc, dict) or not all(isinstance(doc.get(k), str) and doc[k] for k in fields):
            return self.answer(422, {"message": "Validation Failed",
                                     "errors": [{"resource": "PullRequest", "code": "missing_field"}]})
        if doc["head"].startswith("unpushed"):
            # A branch the forge does not have, answered as each does.
            if forge == "github":
                return self.answer(422, {"message": "Validation Failed", "errors": [
                    {"resource": "PullRequest", "field": "head", "code": "invalid"}]})
            return self.answer(404, {"message": "GetBranch: branch does not exist"})
        for p in prs:
            if p["state"] == "open" and p["head"]["ref"] == doc["head"] and p["base"]["ref"] == doc["base"]:
                if forge == "github":
                    return self.answer(422, {"message": "Validation Failed", "errors": [{
                        "resource": "PullRequest", "code": "custom",
                        "message": f"A pull request already exists for {owner}:{doc['head']}."}]})
                return self.answer(409, {"message": "pull request already exists for these targets"})
        pr = new_pr(forge, owner, repo, doc["head"], doc["base"], doc["title"], doc.get("body"))
        return self.answer(201, pr)

    def control(self, method, path, body):
        if path == "/_test/state" and method == "GET":
            return self.answer(200, {f: [dict(p, repo=f"{o}/{r}") for (o, r), prs in repos.items() for p in prs]
                                     for f, repos in state.items()})
        if path == "/_test/reset" and method == "POST":
            for f in state:
                state[f].clear()
            return self.answer(200, {})
        if path == "/_test/seed" and method == "POST":
            doc = json.loads(body)
            for p in doc["prs"]:
                new_pr(doc["forge"], doc["owner"], doc["repo"], p["head"], p["base"], p["title"], "")
            return self.answer(200, {})
        return self.answer(404, {"message": "Not Found"})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.log = args.log
    server.tokens = {"github": os.environ["FORGE_GITHUB_TOKEN"], "gitea": os.environ["FORGE_GITEA_TOKEN"]}
    open(args.log, "a").close()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(f"{server.server_address[1]}\n")
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
