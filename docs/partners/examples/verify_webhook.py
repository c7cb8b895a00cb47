"""Verify a webhook of the crew record service in Python 3 (standard library only).

    WEBHOOK_SECRET=whsec_sandbox_secret python3 verify_webhook.py   (listens on 127.0.0.1:8765)
"""
import hashlib
import hmac
import json
import os
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

REPLAY_WINDOW_SECONDS = 5 * 60


def verify_webhook(raw_body: bytes, signature_header: str, secret: str, now: float | None = None) -> bool:
    """True when X-SVC-Signature holds an HMAC-SHA256 of b"<ts>." + raw_body under the secret
    and <ts> is within the replay window; any of several v1 entries (secret rotation) may match."""
    timestamp, signatures = None, []
    for part in (signature_header or "").split(","):
        key, _, value = part.strip().partition("=")
        if key == "t":
            timestamp = value
        elif key == "v1":
            signatures.append(value)
    if not timestamp or not timestamp.isdigit() or not signatures:
        return False
    if abs((time.time() if now is None else now) - int(timestamp)) > REPLAY_WINDOW_SECONDS:
        return False
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, signature) for signature in signatures)


SEEN = set()  # event ids already handled; use a unique key in your database in production


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        raw_body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if not verify_webhook(raw_body, self.headers.get("X-SVC-Signature", ""), os.environ["WEBHOOK_SECRET"]):
            self.send_response(400)
            self.end_headers()
            return
        event = json.loads(raw_body)
        self.send_response(204)  # acknowledge within 5 seconds; do the work afterwards
        self.end_headers()
        if event["id"] in SEEN:  # at-least-once delivery: a retry repeats the same id
            return
        SEEN.add(event["id"])
        print(event["type"], event["user_id"])


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", 8765), Receiver).serve_forever()
