#!/usr/bin/env python3
"""A stand-in for the model APIs of the agent CLIs, for driving the real
Claude Code, Codex and Gemini CLIs headless in the tests
(tests/launcher/agents.sh): Anthropic's Messages API (POST /v1/messages),
OpenAI's Responses API (POST /v1/responses) and Google's Gemini API
(POST /v1beta/models/MODEL:generateContent or :streamGenerateContent).

usage: fakeapi.py ADDRESS PORT SCRIPTS_DIR LOG
       fakeapi.py --results LOG NAME

Each answer is streamed (server-sent events) or not, as the request asks.
A request of the agent's main loop (one that offers the agent's tools) is
a turn of a scenario: the scenario is named by the prompt (a user text
that names a file SCRIPTS_DIR/NAME.json), that file is a list of tool
calls ({"tool": NAME, "input": ...}, in the tool names and input shapes
of the agent's own API), and the turn's number is the number of tool
calls in the conversation so far. Past the end of the list, or for any
other request (titles, summaries, checks), the answer is the text "done".
Each request is appended to LOG as one JSON line, so a test can read what
every tool call told the model.

With --results, prints what the tool calls of scenario NAME told the
model, from the last request of it in LOG: a line per result in call
order, "N<TAB>error|ok<TAB>TEXT", N from 0, the text's newlines as "\\n".

Prints "listening" once the socket is bound. Loopback or a test's own
network namespace only: it never talks to anything else.
"""
import http.server
import itertools
import json
import os
import sys
import threading

log_lock = threading.Lock()
answered = itertools.count(1)
scripts = None


def scenario_of(texts):
    """The scenario a conversation's user texts name, and its steps."""
    for text in texts:
        name = os.path.basename(text.strip())
        path = os.path.join(scripts or "", name + ".json")
        if name and scripts and os.path.isfile(path):
            with open(path) as f:
                return name, json.load(f)
    return None, []


def named(texts, name):
    return any(os.path.basename(t.strip()) == name for t in texts)


# --- Anthropic's Messages API (Claude Code) --------------------------------

class Messages:
    @staticmethod
    def user_texts(body):
        for message in body.get("messages", []):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                yield content
            else:
                for block in content:
                    if block.get("type") == "text":
                        yield block.get("text", "")

    @staticmethod
    def main_loop(body):
        tools = {t.get("name") for t in body.get("tools", [])}
        return "Write" in tools and "Bash" in tools

    @staticmethod
    def calls(body):
        # Counted by block: the CLI may merge one answer's blocks with
        # another's.
        return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant"
                   and isinstance(m.get("content"), list)
                   for b in m["content"] if b.get("type") == "tool_use")

    @staticmethod
    def results(body):
        for message in body.get("messages", []):
            if message.get("role") != "user" or isinstance(message.get("content"), str):
                continue
            for block in message["content"]:
                if block.get("type") != "tool_result":
                    continue
                content = block.get("content")
                if isinstance(content, list):
                    content = "".join(c.get("text", "") for c in content)
                yield bool(block.get("is_error")), content or ""

    @staticmethod
    def answer(body, turn, step):
        if step:
            block = {"type": "tool_use", "id": "toolu_%02d" % turn, "name": step["tool"],
                     "input": step["input"]}
            stop = "tool_use"
        else:
            block, stop = {"type": "text", "text": "done"}, "end_turn"
        # Each answer its own id: the CLI keeps one message per id.
        message = {"id": "msg_%06d" % next(answered), "type": "message", "role": "assistant",
                   "model": body.get("model", "fake"), "content": [], "stop_reason": None,
                   "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        if not body.get("stream"):
            message.update(content=[block], stop_reason=stop)
            return "application/json", json.dumps(message)
        events = [("message_start", {"message": message})]
        if block["type"] == "tool_use":
            events.append(("content_block_start",
                           {"index": 0, "content_block": dict(block, input={})}))
            events.append(("content_block_delta",
                           {"index": 0, "delta": {"type": "input_json_delta",
                                                  "partial_json": json.dumps(block["input"])}}))
        else:
            events.append(("content_block_start",
                           {"index": 0, "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta",
                           {"index": 0, "delta": {"type": "text_delta", "text": block["text"]}}))
        events.append(("content_block_stop", {"index": 0}))
        events.append(("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 1}}))
        events.append(("message_stop", {}))
        return "text/event-stream", "".join(
            "event: %s\ndata: %s\n\n" % (kind, json.dumps(dict(data, type=kind)))
            for kind, data in events)


# --- OpenAI's Responses API (Codex) ----------------------------------------

class Responses:
    CALLS = ("custom_tool_call", "function_call")
    OUTPUTS = ("custom_tool_call_output", "function_call_output")

    @staticmethod
    def items(body):
        items = body.get("input", [])
        return items if isinstance(items, list) else []

    @staticmethod
    def user_texts(body):
        if isinstance(body.get("input"), str):
            yield body["input"]
        for item in Responses.items(body):
            if item.get("type", "message") == "message" and item.get("role") == "user":
                content = item.get("content")
                if isinstance(content, str):
                    yield content
                    continue
                for part in content or []:
                    if part.get("type") == "input_text":
                        yield part.get("text", "")

    @staticmethod
    def main_loop(body):
        return bool(body.get("tools")) or any(
            i.get("type") == "additional_tools" for i in Responses.items(body))

    @staticmethod
    def calls(body):
        return sum(1 for i in Responses.items(body) if i.get("type") in Responses.CALLS)

    @staticmethod
    def results(body):
        for item in Responses.items(body):
            if item.get("type") not in Responses.OUTPUTS:
                continue
            output = item.get("output")
            if isinstance(output, list):
                output = "".join(p.get("text", "") for p in output if isinstance(p, dict))
            elif isinstance(output, dict):
                output = output.get("content", json.dumps(output))
            yield False, output or ""

    @staticmethod
    def answer(body, turn, step):
        n = next(answered)
        if step and step["tool"] == "exec":
            item = {"type": "custom_tool_call", "id": "ctc_%06d" % n, "status": "completed",
                    "call_id": "call_%02d" % turn, "name": "exec", "input": step["input"]}
        elif step:
            item = {"type": "function_call", "id": "fc_%06d" % n, "status": "completed",
                    "call_id": "call_%02d" % turn, "name": step["tool"],
                    "arguments": json.dumps(step["input"])}
        else:
            item = {"type": "message", "id": "msg_%06d" % n, "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "done", "annotations": []}]}
        usage = {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 2}
        response = {"id": "resp_%06d" % n, "object": "response", "status": "completed",
                    "model": body.get("model", "fake"), "output": [item], "usage": usage}
        if not body.get("stream"):
            return "application/json", json.dumps(response)
        events = [("response.created", {"response": dict(response, status="in_progress",
                                                          output=[])}),
                  ("response.output_item.added", {"output_index": 0, "item": item}),
                  ("response.output_item.done", {"output_index": 0, "item": item}),
                  ("response.completed", {"response": response})]
        return "text/event-stream", "".join(
            "event: %s\ndata: %s\n\n" % (kind, json.dumps(dict(data, type=kind)))
            for kind, data in events)


# --- Google's Gemini API (Gemini CLI) --------------------------------------

class Gemini:
    @staticmethod
    def user_texts(body):
        for content in body.get("contents", []):
            if content.get("role", "user") == "user":
                for part in content.get("parts", []):
                    if "text" in part:
                        yield part["text"]

    @staticmethod
    def main_loop(body):
        names = {f.get("name") for t in body.get("tools", [])
                 for f in t.get("functionDeclarations", [])}
        return "write_file" in names

    @staticmethod
    def calls(body):
        return sum(1 for c in body.get("contents", []) if c.get("role") == "model"
                   for p in c.get("parts", []) if "functionCall" in p)

    @staticmethod
    def results(body):
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                if "functionResponse" not in part:
                    continue
                response = part["functionResponse"].get("response", {})
                if "error" in response:
                    yield True, str(response["error"])
                else:
                    output = response.get("output", response)
                    yield False, output if isinstance(output, str) else json.dumps(output)

    @staticmethod
    def least(schema):
        kind = str(schema.get("type", "object")).lower()
        if kind == "object":
            properties = schema.get("properties", {})
            return {k: Gemini.least(properties.get(k, {})) for k in schema.get("required", [])}
        if schema.get("enum"):
            return schema["enum"][0]
        return {"string": "done", "integer": 1, "number": 1, "boolean": False,
                "array": []}.get(kind)

    @staticmethod
    def answer(body, turn, step, stream):
        if step:
            part = {"functionCall": {"id": "call_%02d" % turn, "name": step["tool"],
                                     "args": step["input"]}}
        else:
            config = body.get("generationConfig") or body.get("config") or {}
            # A check that asks for JSON (the model router's score, who
            # speaks next) gets the least answer its schema takes.
            if config.get("responseMimeType") == "application/json":
                schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
                part = {"text": json.dumps(Gemini.least(schema))}
            else:
                part = {"text": "done"}
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]},
                                 "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                                   "totalTokenCount": 2},
                 "modelVersion": "fake", "responseId": "r%06d" % next(answered)}
        if not stream:
            return "application/json", json.dumps(chunk)
        return "text/event-stream", "data: %s\r\n\r\n" % json.dumps(chunk)


def api_of(path):
    if path.startswith("/v1/messages"):
        return Messages
    if path.startswith("/v1/responses"):
        return Responses
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return Gemini
    return None


def print_results(log_path, name):
    last = None
    with open(log_path) as log:
        for line in log:
            record = json.loads(line)
            api, body = api_of(record["path"]), record["body"]
            if api and api.main_loop(body) and named(api.user_texts(body), name):
                last = api, body
    if not last:
        return
    api, body = last
    for n, (error, text) in enumerate(api.results(body)):
        print("%d\t%s\t%s" % (n, "error" if error else "ok", text.replace("\n", "\\n")))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, kind, text):
        out = text.encode()
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_GET(self):
        # Codex tries a WebSocket first, then falls back to POST.
        self.reply(404, "application/json", "{}")

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        with log_lock, open(log_path, "a") as log:
            log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        api = api_of(self.path)
        if api is None or "count_tokens" in self.path or ":countTokens" in self.path:
            self.reply(200, "application/json", json.dumps({"input_tokens": 1, "totalTokens": 1}))
            return
        step = None
        turn = api.calls(body)
        if api.main_loop(body):
            _, steps = scenario_of(api.user_texts(body))
            step = steps[turn] if turn < len(steps) else None
        if api is Gemini:
            kind, text = api.answer(body, turn, step, ":streamGenerateContent" in self.path)
        else:
            kind, text = api.answer(body, turn, step)
        self.reply(200, kind, text)


if __name__ == "__main__":
    if sys.argv[1] == "--results":
        print_results(sys.argv[2], sys.argv[3])
        sys.exit(0)
    address, port, scripts, log_path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    server = http.server.ThreadingHTTPServer((address, port), Handler)
    print("listening", flush=True)
    server.serve_forever()
