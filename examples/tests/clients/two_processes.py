"""One MCP client, two support-desk processes: the official MCP Python SDK's client, without
elicitation, in one session whose requests a router sends to one process or the other.

    two_processes.py <support_desk binary> <url A> <redis URL of A> <url B> <redis URL of B>

The servers run `--mcp-http 127.0.0.1:0 --stateless --redis URL --defer-approvals`. The script
makes the calls, decides the pending ones with `support_desk --sign-decision` (on the Redis store
of the process the call waited on; the secret comes from the environment), and prints what it
observed as one JSON object on stdout; the Rust test (examples/tests/mcp_two_processes.rs)
judges it. An exception is printed to stderr with a non-zero exit status.
"""

import json
import subprocess
import sys

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

DECISION_META = "io.tool-runtime/decision"


class Router(httpx2.AsyncBaseTransport):
    """Sends each HTTP request to the process `to` names, as a load balancer would, and keeps a
    log of where each JSON-RPC message went and whether an MCP session id came back."""

    def __init__(self, urls):
        self.urls = {name: httpx2.URL(url) for name, url in urls.items()}
        self.inner = httpx2.AsyncHTTPTransport()
        self.target = "A"
        self.log = []

    def to(self, name):
        self.target = name

    async def handle_async_request(self, request):
        url = self.urls[self.target]
        request.url = request.url.copy_with(host=url.host, port=url.port)
        request.headers["host"] = f"{url.host}:{url.port}"
        method = None
        if request.method == "POST":
            try:
                method = json.loads(request.content).get("method")
            except (ValueError, AttributeError):
                method = None
        response = await self.inner.handle_async_request(request)
        self.log.append(
            {
                "server": self.target,
                "http": request.method,
                "method": method,
                "status": response.status_code,
                "session_id": response.headers.get("mcp-session-id"),
            }
        )
        return response

    async def aclose(self):
        await self.inner.aclose()


def result(answer):
    """A tools/call result, as facts; an error's JSON is read."""
    texts = [block.text for block in answer.content if getattr(block, "type", "") == "text"]
    facts = {
        "is_error": bool(answer.is_error),
        "texts": texts,
        "structured": answer.structured_content,
    }
    if answer.is_error and texts:
        try:
            facts["error"] = json.loads(texts[0])["error"]
        except (ValueError, KeyError, TypeError):
            facts["error"] = None
    return facts


def sign(binary, redis_url, request_id, *decision):
    """The signed decision `support_desk --sign-decision` prints, and what it showed."""
    finished = subprocess.run(
        [binary, "--sign-decision", request_id, *decision, "--redis", redis_url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if finished.returncode != 0:
        raise RuntimeError(f"--sign-decision failed ({finished.returncode}): {finished.stderr}")
    return finished.stdout.strip(), finished.stderr.strip()


async def calls(session, router, binary, redis):
    facts = {}
    router.to("A")
    init = await session.initialize()
    facts["server"] = init.server_info.name

    async def call(server, name, arguments, meta=None):
        router.to(server)
        return result(await session.call_tool(name, arguments, meta=meta))

    # Tickets: A opens two; B is sent the second again, then one of its own.
    first = {"subject": "A-1008 arrived damaged", "order_id": "A-1008"}
    second = {"subject": "A-1016 never arrived", "order_id": "A-1016"}
    third = {"subject": "A-1024 was charged twice"}
    facts["a_first"] = await call("A", "create_ticket", first)
    facts["a_second"] = await call("A", "create_ticket", second)
    facts["b_second"] = await call("B", "create_ticket", second)
    facts["b_third"] = await call("B", "create_ticket", third)
    facts["a_third"] = await call("A", "create_ticket", third)

    # An approval left pending on A, decided from the command line, resumed on B, replayed on A.
    cancel = {"order_id": "A-1000"}
    pending = await call("A", "cancel_order", cancel)
    facts["pending"] = pending
    request_id = ((pending.get("error") or {}).get("details") or {}).get("request_id")
    if request_id is None:
        facts["routes"] = router.log
        return facts
    token, shown = sign(binary, redis["A"], request_id, "approve")
    facts["shown"] = shown
    facts["resumed"] = await call("B", "cancel_order", cancel, {DECISION_META: token})
    facts["replayed"] = await call("A", "cancel_order", cancel, {DECISION_META: token})

    # The other way round, denied: pending on B, resumed on A with the person's reason.
    escalate = {"reason": "the customer asks for a person"}
    pending_b = await call("B", "escalate_to_human", escalate)
    facts["pending_b"] = pending_b
    request_b = ((pending_b.get("error") or {}).get("details") or {}).get("request_id")
    if request_b is not None:
        token_b, _ = sign(binary, redis["B"], request_b, "deny", "--reason", "not during the night")
        facts["denied"] = await call("A", "escalate_to_human", escalate, {DECISION_META: token_b})
    facts["routes"] = router.log
    return facts


async def main():
    binary, url_a, redis_a, url_b, redis_b = sys.argv[1:6]
    router = Router({"A": url_a, "B": url_b})
    async with httpx2.AsyncClient(
        transport=router,
        headers={
            "x-support-user": "ada",
            "x-support-roles": "agent",
            # A `:` in the session, escaped in the store's keys: `--sign-decision` reads it back.
            "x-support-session": "ada:two-processes",
        },
        timeout=httpx2.Timeout(30.0),
    ) as http:
        async with streamable_http_client(url_a, http_client=http) as streams:
            read, write = streams[0], streams[1]
            # No elicitation callback: the client cannot put an ask to its user.
            async with ClientSession(read, write) as session:
                facts = await calls(session, router, binary, {"A": redis_a, "B": redis_b})
    print(json.dumps(facts))


if __name__ == "__main__":
    anyio.run(main)
