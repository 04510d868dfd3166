"""A test HTTP server of the network tests: answers every GET with
"hello from NAME" and logs one "request PATH" line per request; with
--loki, takes Loki's push API instead and appends each body it receives to
FILE. Run by tests/network/internet.bash and loki.sh."""
import http.server
import socketserver
import sys


class Server(http.server.HTTPServer):
    # HTTPServer's own looks the address up in DNS, which the test
    # internet's namespace has none of.
    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print("request", self.path, flush=True)
        body = ("hello from %s\n" % sys.argv[3]).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Loki(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        ok = self.path == "/loki/api/v1/push"
        if ok:
            with open(sys.argv[4], "ab") as f:
                f.write(body + b"\n")
        print("push", self.path, len(body), flush=True)
        self.send_response(204 if ok else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    handler = Loki if len(sys.argv) > 4 and sys.argv[3] == "--loki" else Hello
    server = Server((sys.argv[1], int(sys.argv[2])), handler)
    print("listening", flush=True)
    server.serve_forever()


main()
