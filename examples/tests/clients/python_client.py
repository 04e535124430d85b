"""The support desk as the official MCP Python SDK's client sees it.

    python_client.py stdio <support_desk binary>   # starts `support_desk --mcp --page-size 4`
    python_client.py http <url>                     # a `support_desk --mcp-http ... --page-size 4`

Runs one session of calls and prints what it observed as one JSON object on stdout; the Rust
test (examples/tests/mcp_python.rs) judges it. An exception is printed to stderr with a non-zero
exit status.
"""

import json
import sys

import anyio
import httpx2
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


class Observed:
    """What the client saw, beside what the calls answered."""

    def __init__(self):
        self.elicitations = []
        self.logs = []
        self.notifications = []

    async def elicit(self, context, params):
        self.elicitations.append({"message": params.message, "schema": params.requested_schema})
        if "cancel order" in params.message:
            return types.ElicitResult(action="accept", content={"decision": "approve"})
        if "page the on-call agent" in params.message:
            return types.ElicitResult(
                action="accept", content={"decision": "deny", "reason": "not during the night"}
            )
        return types.ElicitResult(action="decline")

    async def log(self, params):
        self.logs.append({"level": params.level, "data": params.data})

    async def message(self, message):
        if isinstance(message, Exception):
            return
        method = getattr(message, "method", None)
        if method is None and hasattr(message, "root"):
            method = getattr(message.root, "method", None)
        if method:
            self.notifications.append(method)


def result(answer):
    """A tools/call result, as facts."""
    return {
        "is_error": bool(answer.is_error),
        "texts": [block.text for block in answer.content if getattr(block, "type", "") == "text"],
        "structured": answer.structured_content,
    }


async def session_calls(session, observed, change_scope):
    facts = {}
    init = await session.initialize()
    facts["server"] = init.server_info.name

    pages, cursor = [], None
    while True:
        params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
        listed = await session.list_tools(params=params)
        pages.append([tool.name for tool in listed.tools])
        cursor = listed.next_cursor
        if not cursor:
            break
    facts["pages"] = pages
    annotations = {}
    for tool in (await session.list_tools(params=None)).tools:
        if tool.name == "cancel_order":
            annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True)
    facts["cancel_order_annotations"] = annotations

    facts["status"] = result(await session.call_tool("get_order_status", {"order_id": "A-1024"}))
    facts["invalid_arguments"] = result(
        await session.call_tool("get_order_status", {"order_id": 5})
    )
    facts["out_of_scope"] = result(
        await session.call_tool("issue_refund", {"order_id": "A-1024", "amount": 5})
    )
    try:
        await session.call_tool("no_such_tool", {})
        facts["unknown_tool"] = {"code": None}
    except MCPError as error:
        facts["unknown_tool"] = {"code": error.code, "message": error.error.message}

    progress = []

    async def on_progress(done, total, message):
        progress.append([done, total, message])

    label = await session.call_tool(
        "fetch_shipping_label", {"order_id": "A-1008"}, progress_callback=on_progress
    )
    facts["progress"] = {"result": result(label), "updates": progress}

    # Cancelled after its first progress report: no report and no log of the tool after that.
    cancelled_progress = []
    first = anyio.Event()

    async def on_cancelled_progress(done, total, message):
        cancelled_progress.append(done)
        first.set()

    logs_before = len(observed.logs)
    async with anyio.create_task_group() as group:

        async def call():
            await session.call_tool(
                "fetch_shipping_label", {"order_id": "A-1032"}, progress_callback=on_cancelled_progress
            )

        scope = anyio.CancelScope()

        async def cancellable():
            with scope:
                await call()

        group.start_soon(cancellable)
        with anyio.fail_after(10):
            await first.wait()
        scope.cancel()
    reports_at_cancel = len(cancelled_progress)
    await anyio.sleep(2.0)
    facts["cancelled"] = {
        "reports_at_cancel": reports_at_cancel,
        "reports_after_cancel": len(cancelled_progress) - reports_at_cancel,
        # Over HTTP a log travels on the session's stream and may arrive after its call's
        # result: only the cancelled call's own log counts.
        "logs_after_cancel": [
            log for log in observed.logs[logs_before:] if "A-1032" in str(log["data"])
        ],
        "next_call": result(await session.call_tool("get_order_status", {"order_id": "A-1000"})),
    }

    facts["approved"] = result(await session.call_tool("cancel_order", {"order_id": "A-1000"}))
    facts["approved_but_failed"] = result(
        await session.call_tool("cancel_order", {"order_id": "A-1008"})
    )
    facts["denied"] = result(
        await session.call_tool("escalate_to_human", {"reason": "the customer asks for a person"})
    )
    ticket = {"subject": "A-1008 arrived damaged", "order_id": "A-1008"}
    facts["ticket_first"] = result(await session.call_tool("create_ticket", ticket))
    facts["ticket_again"] = result(await session.call_tool("create_ticket", ticket))
    facts["ticket_other"] = result(
        await session.call_tool("create_ticket", {"subject": "A-1016 never arrived"})
    )
    facts["elicitations"] = observed.elicitations
    facts["logs"] = observed.logs

    if change_scope is not None:
        change_scope("order_status")
        narrowed = await session.list_tools(params=None)
        await anyio.sleep(0.5)
        facts["narrowed"] = [tool.name for tool in narrowed.tools]
    facts["notifications"] = observed.notifications
    return facts


async def main():
    mode, target = sys.argv[1], sys.argv[2]
    observed = Observed()
    callbacks = dict(
        elicitation_callback=observed.elicit,
        logging_callback=observed.log,
        message_handler=observed.message,
    )
    if mode == "stdio":
        params = StdioServerParameters(command=target, args=["--mcp", "--page-size", "4"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, **callbacks) as session:
                facts = await session_calls(session, observed, None)
    else:
        async with httpx2.AsyncClient(
            headers={"x-support-user": "ada", "x-support-roles": "agent"},
            timeout=httpx2.Timeout(30.0),
        ) as http:

            def change_scope(intent):
                http.headers["x-support-intent"] = intent

            async with streamable_http_client(target, http_client=http) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write, **callbacks) as session:
                    facts = await session_calls(session, observed, change_scope)
    print(json.dumps(facts))


if __name__ == "__main__":
    anyio.run(main)
